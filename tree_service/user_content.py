"""Every column that can hold a user's words, or a copy of them, and what forgetting does to it
(T12, T16): the registry purge and revocation are held to.

A purge forgets an archived branch's content; a revocation withdraws another person's cited
words. Either is only as good as its reach: each copy a later feature made (a stored response,
a snapshot, a summary) must be forgotten too. So every text, JSON, bytea and array column of
the schema is here: in CONTENT, with what a purge and a revocation do to it today, or in
CONTENT_FREE, with the reason it cannot hold anyone's words. A column in neither fails the
catalog test (tests/tree_service/test_user_content.py), so a new column cannot be added without
saying what forgetting does to it. A copy outside the purged branch names the PurgeChoice
field (`choice`) under which a purge rewrites it; left unchosen, the copy is kept and marked as
resting on purged content. Where forgetting does not reach a copy, the entry says so
(NOT_REACHED) and names the gap.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Purge(StrEnum):
    """What purging a branch does to a column's words."""

    CLEARED = "cleared"  # the purged nodes' rows keep their frame; the words are blanked
    DELETED = "deleted"  # the purged nodes' rows are deleted
    TOMBSTONED = "tombstoned"  # a copy elsewhere is rewritten: where it pointed stays, words go
    RETRACTED = "retracted"  # a fact resting on the words says it was retracted, and why
    FOLLOWS = "follows"  # generated from another column of the row, and changes with it
    RECORD = "record"  # the purge's own record: what a tombstone says (who, when, why)
    NOT_BRANCH_CONTENT = "not_branch_content"  # words of a tree, a scope or a grant, not a branch's
    NONE_STORED = (
        "none_stored"  # kept without the words, filled in from the current state when read
    )
    PARTLY = "partly"  # some of its rows or paths are forgotten; `gap` names what survives
    NOT_REACHED = "not_reached"  # a copy of a branch's words that a purge leaves as it is


class Revoke(StrEnum):
    """What revoking a cross-person citation grant does to a column."""

    NOT_CITED = "not_cited"  # never holds words cited from another person's tree
    TOMBSTONED = "tombstoned"  # the citations made under the grant are rewritten as tombstones
    DELETED = "deleted"  # the rows made from the cited words are deleted
    NONE_STORED = "none_stored"  # kept without the words, filled in from the current state
    NOT_REACHED = "not_reached"  # holds the cited words after the revocation


@dataclass(frozen=True)
class Content:
    """A column that can hold someone's words."""

    holds: str  # whose words, and what of them
    purge: Purge
    revoke: Revoke = Revoke.NOT_CITED
    paths: tuple[str, ...] = ()  # in a JSON or bytes column: where the words are
    gap: str = ""  # for PARTLY and NOT_REACHED: which copy survives
    choice: str = ""  # the PurgeChoice field that lets a purge rewrite this copy; "" = always


# (table, column) → what it holds and what forgetting does to it.
CONTENT: dict[tuple[str, str], Content] = {
    # ---- the branch's own nodes ------------------------------------------------------------
    ("nodes", "text"): Content("a question's, answer's or observation's words", Purge.CLEARED),
    ("nodes", "reasoning_summary"): Content("an answer's readable reasoning", Purge.CLEARED),
    ("nodes", "evidence"): Content("an answer's evidence", Purge.CLEARED, paths=("[*]",)),
    ("nodes", "tool_trace"): Content(
        "summaries of an answer's tool steps",
        Purge.CLEARED,
        paths=("[*].input_summary", "[*].output_summary"),
    ),
    ("nodes", "attachments"): Content("the attachments' names", Purge.CLEARED, paths=("[*].name",)),
    ("nodes", "conditions"): Content(
        "the run conditions' parameters", Purge.CLEARED, paths=("parameters.*",)
    ),
    ("nodes", "citations"): Content(
        "the cited ranges' snapshots, notes and excerpts",
        Purge.TOMBSTONED,  # a purged node's own are cleared; those citing it become tombstones
        Revoke.TOMBSTONED,
        paths=("[*].snapshot", "[*].note", "[*].anchor.excerpt"),
        choice="citations",
    ),
    ("nodes", "comparison"): Content(
        "a comparison's criteria", Purge.CLEARED, paths=("criteria[*]",)
    ),
    ("bud_chunks", "text"): Content("a streaming answer's chunks", Purge.DELETED),
    ("source_revisions", "text"): Content("a node's message text as a source", Purge.CLEARED),
    ("context_summaries", "text"): Content(
        "a caller's summary of a node, a tool result or a citation",
        Purge.DELETED,  # a summary of a citation into the branch goes with the citation
        Revoke.DELETED,
    ),
    ("commitments", "statement"): Content("a commitment stated in the branch", Purge.CLEARED),
    ("tasks", "goal"): Content("a delegated task's goal", Purge.CLEARED),
    ("task_reports", "message"): Content("what a task's worker reported", Purge.CLEARED),
    ("task_reports", "evidence"): Content(
        "a task report's evidence", Purge.CLEARED, paths=("[*]",)
    ),
    ("tasks", "stop_conditions"): Content(
        "a delegated task's stop conditions, in the user's words", Purge.CLEARED
    ),
    ("arbiter_rulings", "action"): Content(
        "the real-world action a ruling is about", Purge.CLEARED
    ),
    ("arbiter_rulings", "reason"): Content("why the arbiter ruled so", Purge.CLEARED),
    ("effects", "action"): Content("a real-world action taken from a node", Purge.CLEARED),
    ("effects", "parameters"): Content("the action's parameters", Purge.CLEARED, paths=("*",)),
    ("canon_invitations", "reason"): Content("why the node was proposed for canon", Purge.CLEARED),
    ("canon_invitations", "decision_reason"): Content("why the user declined", Purge.CLEARED),
    ("branch_transitions", "summary"): Content(
        "a conclusion's reviewable summary of a branch",
        Purge.CLEARED,  # the purged branches' own; another branch's quoting it is retracted
        choice="conclusions",
    ),
    ("branch_transitions", "reason"): Content(
        "why the branch moved", Purge.CLEARED, choice="conclusions"
    ),
    # ---- copies of the branch's words elsewhere ---------------------------------------------
    ("main_line_versions", "snapshot"): Content(
        "the canonicalized nodes, whole",
        Purge.TOMBSTONED,
        Revoke.TOMBSTONED,  # and on read, for versions revoked before the rewrite was made
        paths=(
            "[*].text",
            "[*].reasoning_summary",
            "[*].evidence",
            "[*].tool_trace",
            "[*].attachments",
            "[*].conditions",
            "[*].citations",
            "[*].comparison",
        ),
        choice="canon_entries",
    ),
    ("context_versions", "items"): Content(
        "the items of an assembled context, verbatim or summarized",
        Purge.TOMBSTONED,  # a citation's item follows `citations`, a memory's `graph_facts`
        Revoke.TOMBSTONED,  # and on read, as above
        paths=("[*].text",),
    ),
    ("transplants", "ancestor_path"): Content(
        "the transplanted branch's ancestors, whole",
        Purge.TOMBSTONED,
        Revoke.TOMBSTONED,  # and on read, as above
        paths=(
            "[*].text",
            "[*].reasoning_summary",
            "[*].evidence",
            "[*].tool_trace",
            "[*].attachments",
            "[*].conditions",
            "[*].citations",
            "[*].comparison",
        ),
        choice="transplant_origins",
    ),
    ("idempotency_keys", "response"): Content(
        "the answer of every write, replayed to a retry: stored without the words a purge or "
        "a revocation may forget, which a replay fills in as they read now (stored_responses)",
        Purge.NONE_STORED,
        Revoke.NONE_STORED,
        paths=("the fields stored_responses.KEPT_WORDS keeps",),
    ),
    ("purges", "response"): Content(
        "what a purge did: ids and counts, and the tombstone (stored without the subjects "
        "of the preferences it retracted)",
        Purge.RECORD,
        paths=("tombstone.reason",),
    ),
    # ---- the story graph: facts resting on the words ----------------------------------------
    ("graph_objects", "title"): Content(
        "a story-graph object's title",
        Purge.RETRACTED,  # a source reference to a purged message is retitled
        choice="graph_facts",
    ),
    ("graph_objects", "body"): Content(
        "a story-graph object's text (a source reference's saved fragment)",
        Purge.RETRACTED,
        choice="graph_facts",
    ),
    ("graph_objects", "title_folded"): Content("the title, lowered for search", Purge.FOLLOWS),
    ("graph_objects", "body_folded"): Content("the text, lowered for search", Purge.FOLLOWS),
    ("graph_objects", "details"): Content(
        "a relation's reason, repeated beside its text",
        Purge.RETRACTED,  # the reason goes; the purge's record is added
        paths=("reason",),
        choice="graph_facts",
    ),
    ("leaves", "text"): Content("a shared leaf fact", Purge.RETRACTED, choice="graph_facts"),
    ("leaves", "text_folded"): Content("the leaf, lowered for search", Purge.FOLLOWS),
    ("preferences", "text"): Content(
        "a confirmed long-term preference", Purge.RETRACTED, choice="graph_facts"
    ),
    ("preferences", "subject"): Content(
        "what a preference is about", Purge.RETRACTED, choice="graph_facts"
    ),
    ("review_results", "coverage_gaps"): Content(
        "a review's account of what it did not cover", Purge.NOT_BRANCH_CONTENT
    ),
    ("sources", "title"): Content("a recorded source's title", Purge.NOT_BRANCH_CONTENT),
    ("sources", "text"): Content("a recorded source's text", Purge.NOT_BRANCH_CONTENT),
    # ---- words of a tree, a grant or a request, not of a branch -----------------------------
    ("trees", "title"): Content("a tree's title", Purge.NOT_BRANCH_CONTENT),
    ("trees", "context_state"): Content(
        "a session's context state (the host app's JSON)", Purge.NOT_BRANCH_CONTENT, paths=("*",)
    ),
    ("citation_authorizations", "redactions"): Content(
        "the terms a grantor redacts from what others cite", Purge.NOT_BRANCH_CONTENT
    ),
    ("canon_candidates", "subject"): Content(
        "what a proposed memory is about",
        Purge.TOMBSTONED,
        choice="canon_entries",
    ),
    ("canon_candidates", "text"): Content(
        "a proposed heart trace, record or memory",
        Purge.TOMBSTONED,
        choice="canon_entries",
    ),
    ("canon_candidates", "review_reason"): Content(
        "why the user accepted or rejected a candidate", Purge.NOT_BRANCH_CONTENT
    ),
    ("estimates", "approval_reason"): Content(
        "why the user approved a charge", Purge.NOT_BRANCH_CONTENT
    ),
    ("purges", "reason"): Content("why the user purged: the tombstone says it", Purge.RECORD),
}

_STATE = "a state, kind or role from the service's own vocabulary"
_KEY = "an id, a key or a scope key"
_ACTOR = "names who acted (a person, an app, a worker); the record of the act keeps it"
_LABEL = "a name from a fixed or caller-chosen vocabulary (a world, runtime, tool, currency)"
_DERIVED = "a digest, count or day the service derives; it holds no words"

CONTENT_FREE: dict[tuple[str, str], str] = {
    **dict.fromkeys(
        [
            ("branch_transitions", "from_state"),
            ("branch_transitions", "to_state"),
            ("branches", "state"),
            ("canon_candidates", "kind"),
            ("canon_candidates", "status"),
            ("canon_invitations", "state"),
            ("commitments", "kind"),
            ("commitments", "realm"),
            ("context_counts", "role"),
            ("context_counts", "object_type"),
            ("context_hubs", "object_type"),
            ("context_members", "object_type"),
            ("context_members", "kind"),
            ("context_members", "event_time_precision"),
            ("effects", "kind"),
            ("estimates", "operation"),
            ("estimates", "charge_state"),
            ("graph_links", "from_type"),
            ("graph_links", "link"),
            ("graph_links", "to_type"),
            ("graph_objects", "object_type"),
            ("graph_objects", "kind"),
            ("graph_objects", "confirmation_state"),
            ("graph_objects", "event_time_precision"),
            ("graph_objects", "event_time_basis"),
            ("leaf_migration_report", "outcome"),
            ("leaves", "source_type"),
            ("leaves", "confirmation_state"),
            ("leaves", "event_time_precision"),
            ("leaves", "event_time_basis"),
            ("leaf_extractions", "source_type"),
            ("main_line_versions", "scope"),
            ("main_lines", "scope"),
            ("nodes", "kind"),
            ("nodes", "realm"),
            ("nodes", "answer_state"),
            ("nodes", "stop_reason"),
            ("nodes", "continuation_kind"),
            ("review_results", "phase"),
            ("review_results", "coverage_basis"),
            ("review_results", "excluded_source_types"),
            ("scope_days", "basis"),
            ("scope_results", "excluded_source_types"),
            ("source_revisions", "role"),
            ("sources", "source_type"),
            ("task_reports", "kind"),
            ("tasks", "state"),
            ("tasks", "stop_reason"),
            ("tree_events", "kind"),
            ("trees", "default_realm"),
        ],
        _STATE,
    ),
    **dict.fromkeys(
        [
            ("branch_transitions", "open_branch_ids"),
            ("branch_transitions", "candidate_ids"),
            ("capabilities", "id"),
            ("context_citations", "scope_key"),
            ("context_citations", "anchor_type"),
            ("context_citations", "anchor_id"),
            ("context_citations", "source_id"),
            ("context_citations", "result_id"),
            ("context_counts", "scope_key"),
            ("context_counts", "anchor_type"),
            ("context_counts", "anchor_id"),
            ("context_hubs", "scope_key"),
            ("context_hubs", "object_id"),
            ("context_members", "scope_key"),
            ("context_members", "anchor_type"),
            ("context_members", "anchor_id"),
            ("context_members", "object_id"),
            ("context_members", "result_id"),
            ("context_members", "cited_ids"),
            ("context_summaries", "subject"),
            ("graph_links", "scope_key"),
            ("graph_links", "result_id"),
            ("graph_links", "from_id"),
            ("graph_links", "to_id"),
            ("graph_objects", "result_id"),
            ("graph_objects", "object_id"),
            ("graph_objects", "scope_key"),
            ("graph_objects", "object_revision"),
            ("graph_objects", "cited_ids"),
            ("idempotency_keys", "key"),
            ("idempotency_keys", "method"),
            ("leaf_extractions", "source_id"),
            ("leaf_extractions", "source_version"),
            ("leaf_extractions", "contract_version"),
            ("leaf_extractions", "scope_key"),
            ("leaf_extractions", "result_id"),
            ("leaf_uses", "scope_key"),
            ("leaf_uses", "object_id"),
            ("leaf_uses", "result_id"),
            ("leaf_uses", "about"),
            ("leaves", "source_id"),
            ("leaves", "source_version"),
            ("leaves", "contract_version"),
            ("leaves", "source_project"),
            ("leaves", "scope_key"),
            ("leaves", "result_id"),
            ("leaves", "object_id"),
            ("main_line_versions", "node_ids"),
            ("main_line_versions", "invitation_id"),
            ("preferences", "id"),
            ("canon_candidates", "memory_id"),
            ("preferences", "scope_key"),
            ("preferences", "about"),
            ("purges", "preview_token"),
            ("review_results", "result_id"),
            ("review_results", "scope_key"),
            ("review_results", "scope_projects"),
            ("schema_migrations", "name"),
            ("scope_days", "scope_key"),
            ("scope_results", "scope_key"),
            ("source_revisions", "project_id"),
            ("sources", "source_id"),
            ("sources", "project_id"),
            ("transplants", "copies"),
            ("tree_events", "detail"),  # kinds, states and ids: migration 0027's triggers
            ("trees", "project_id"),
        ],
        _KEY,
    ),
    **dict.fromkeys(
        [
            ("arbiter_rulings", "arbiter"),
            ("branch_transitions", "changed_by"),
            ("canon_candidates", "reviewed_by"),
            ("canon_invitations", "proposed_by"),
            ("canon_invitations", "decided_by"),
            ("citation_authorizations", "grantor"),
            ("citation_authorizations", "grantee"),
            ("citation_authorizations", "revoked_by"),
            ("commitments", "stated_by"),
            ("commitments", "confirmed_by"),
            ("commitments", "withdrawn_by"),
            ("context_summaries", "written_by"),
            ("effects", "recorded_by"),
            ("estimates", "owner"),
            ("estimates", "requested_by"),
            ("estimates", "approved_by"),
            ("main_line_versions", "confirmed_by"),
            ("merge_references", "merged_by"),
            ("preferences", "confirmed_by"),
            ("purges", "purged_by"),
            ("quotas", "owner"),
            ("task_reports", "reported_by"),
            ("tasks", "leased_by"),
            ("tasks", "accepted_by"),
            ("tasks", "started_by"),
            ("transplants", "transplanted_by"),
            ("trees", "owner"),
        ],
        _ACTOR,
    ),
    **dict.fromkeys(
        [
            ("bindings", "runtime"),
            ("capabilities", "assignments"),
            ("commitments", "world"),
            ("effects", "tool"),
            ("estimates", "model_strategy"),
            ("estimates", "currency"),
            ("main_line_versions", "world"),
            ("main_lines", "world"),
            ("nodes", "world"),
            ("quotas", "currency"),
            ("tasks", "currency"),
            ("tasks", "capability_scope"),
            ("tasks", "data_scope"),
            ("trees", "default_world"),
        ],
        _LABEL,
    ),
    **dict.fromkeys(
        [
            ("bindings", "token_hash"),
            ("context_versions", "digest"),
            ("graph_objects", "event_days"),
            ("graph_objects", "review_days"),
            ("graph_objects", "recorded_days"),
            ("idempotency_keys", "request_hash"),
            ("leaves", "text_hash"),
            ("review_results", "request_hash"),
            ("review_results", "coverage_counts"),
            ("schema_migrations", "checksum"),
        ],
        _DERIVED,
    ),
    ("bindings", "allowed_scopes"): "the scope keys a binding may read",
    ("canon_candidates", "detail"): "a memory candidate's tier (short_term, long_term, core)",
    ("leaf_migration_report", "reason"): "written by migration 0030 about a leaf it linked",
}

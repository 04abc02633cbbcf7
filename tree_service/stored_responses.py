"""What a stored write response keeps, and what a replay of it fills in (T12, T16).

Every write's response is stored under its idempotency key and returned again to a retry with
the same key. So that no stored response holds words a purge or a revocation must forget, the
fields that can hold them (REFILLED) are cleared before the response is stored, and a replay
fills them in from the current state (tree_service.replays): a replay reads as the reads show
it now — the words as written, or after a purge or a revocation, blanks and tombstones. KEPT
says, for every other string field a write's response can hold, why it holds no words to
forget; a test holds both registries to the descriptors, so a new field is placed in one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

import asyncpg
from google.protobuf import message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from mirrortree.v1 import tree_pb2

AnyMessage = TypeVar("AnyMessage", bound=Message)

# Message → its fields a replay fills in from the current state (cleared when stored). A
# refilled field is the loader's whole: nothing below it is looked at.
REFILLED: dict[str, tuple[str, ...]] = {
    "mirrortree.v1.Node": (
        "text",
        "reasoning_summary",
        "evidence",
        "tool_trace",
        "attachments",
        "conditions",
        "citations",
        "comparison",
        "task_run",  # read from the conditions, and cleared with them
        "branch_id",  # where the node stands now: a purged branch shows on it
        "branch_state",
    ),
    "mirrortree.v1.CompareCandidatesResponse": ("comparison",),
    "mirrortree.v1.MainLineVersion": ("snapshot",),
    "mirrortree.v1.TransplantOrigin": ("ancestor_path",),
    "mirrortree.v1.AssembleContextResponse": ("items",),
    "mirrortree.v1.ContextSummary": ("text",),
    "mirrortree.v1.Commitment": ("statement",),
    "mirrortree.v1.ArbiterRuling": ("action", "reason"),
    "mirrortree.v1.Effect": ("action", "parameters_json"),
    "mirrortree.v1.CanonInvitation": ("reason", "decision_reason"),
    "mirrortree.v1.CanonCandidate": ("subject", "text"),
    "mirrortree.v1.Branch": ("transitions", "last_conclusion"),
    "mirrortree.v1.Preference": ("subject", "text"),
    "mirrortree.v1.Task": ("goal", "stop_conditions"),
}

_IDS = "ids, times, states, counts and names of who acted"
_NOT_A_BRANCHS = "words of a tree, a grant, a scope or an approval, which no purge forgets"
_SERVICE = "written by the service from fixed phrases and ids, not by a user"

# Message → (its other string fields, why none holds words a purge or revocation forgets).
KEPT: dict[str, tuple[tuple[str, ...], str]] = {
    "mirrortree.v1.AcceptObservationResponse": (("answer_id",), _IDS),
    "mirrortree.v1.Approval": (("approved_by", "approved_at"), _IDS),
    "mirrortree.v1.ArbiterRuling": (("id", "tree_id", "node_id", "arbiter", "created_at"), _IDS),
    "mirrortree.v1.AssembleContextResponse": (
        ("context_version_id", "node_id", "digest", "created_at"),
        _IDS,
    ),
    "mirrortree.v1.Branch": (("node_id", "tree_id"), _IDS),
    "mirrortree.v1.CanonCandidate": (
        ("id", "kind", "status", "reviewed_by", "reviewed_at", "version_id", "memory_id"),
        _IDS,
    ),
    "mirrortree.v1.CanonEntryImpact": (
        ("version_id", "tree_id", "node_ids", "citing_node_ids"),
        _IDS,
    ),
    "mirrortree.v1.CanonInvitation": (
        (
            "id",
            "tree_id",
            "node_id",
            "proposed_by",
            "decided_by",
            "decided_at",
            "version_id",
            "created_at",
        ),
        _IDS,
    ),
    "mirrortree.v1.Capability": (("id", "assignments"), _IDS),
    "mirrortree.v1.CitationAuthorization": (
        ("id", "tree_id", "grantor", "grantee", "created_at", "revoked_at", "revoked_by"),
        _IDS,
    ),
    "mirrortree.v1.ClaimTaskResponse": (("lease_token",), _IDS),
    "mirrortree.v1.Commitment": (
        (
            "id",
            "tree_id",
            "node_id",
            "world",
            "stated_by",
            "created_at",
            "effective_scope",
            "confirmed_by",
            "main_line_version_id",
            "withdrawn_by",
        ),
        _IDS,
    ),
    "mirrortree.v1.CompareCandidatesResponse": (("node_id",), _IDS),
    "mirrortree.v1.ConsistencyToken": (("lsn",), _IDS),
    "mirrortree.v1.ContextCopyImpact": (("context_version_id", "subject"), _IDS),
    "mirrortree.v1.ContextSummary": (("subject", "written_by", "created_at"), _IDS),
    "mirrortree.v1.CreateBindingResponse": (
        ("binding_id", "token", "session_id", "runtime", "project_id"),
        _IDS,
    ),
    "mirrortree.v1.Effect": (
        (
            "id",
            "tree_id",
            "node_id",
            "kind",
            "ruling_id",
            "tool",
            "recorded_by",
            "created_at",
            "main_line_version_id",
        ),
        _IDS,
    ),
    "mirrortree.v1.Estimate": (
        (
            "id",
            "tree_id",
            "owner",
            "target_id",
            "model_strategy",
            "cost",
            "currency",
            "requested_by",
            "created_at",
            "reserved",
            "actual_cost",
            "node_ids",
            "approval_needed_because",
            "charged_at",
            "settled_at",
        ),
        _IDS,
    ),
    "mirrortree.v1.GraphObjectImpact": (("result_id", "object_id"), _IDS),
    "mirrortree.v1.InboundCitation": (("citing_node_id", "citing_tree_id", "cited_node_id"), _IDS),
    "mirrortree.v1.MainLineVersion": (
        (
            "id",
            "tree_id",
            "world",
            "node_ids",
            "confirmed_by",
            "created_at",
            "replaces_version_id",
            "invitation_id",
        ),
        _IDS,
    ),
    "mirrortree.v1.MergeReference": (
        ("question_id", "source_node_id", "source_tree_id", "merged_by", "created_at"),
        _IDS,
    ),
    "mirrortree.v1.MergeReferenceImpact": (("question_id", "tree_id", "source_node_id"), _IDS),
    "mirrortree.v1.Node": (
        (
            "id",
            "tree_id",
            "parent_id",
            "created_at",
            "world",
            "version_of",
            "adopted_answer_id",
            "stop_reason",
            "extends_answer_id",
            "context_version_id",
        ),
        _IDS,
    ),
    "mirrortree.v1.ObjectRef": (("id",), _IDS),
    "mirrortree.v1.Preference": (("id", "confirmed_by", "updated_at"), _IDS),
    "mirrortree.v1.PreferenceImpact": (("preference_id",), _IDS),
    "mirrortree.v1.Pricing": (
        ("currency", "input_price_per_million", "output_price_per_million", "per_run_fee"),
        _IDS,
    ),
    "mirrortree.v1.ProjectSet": (("project_ids",), _IDS),
    "mirrortree.v1.PurgeImpact": (("branch_id", "tree_id", "sub_branch_ids"), _IDS),
    "mirrortree.v1.PurgeTombstone": (
        ("purge_id", "branch_id", "tree_id", "purged_by", "purged_at", "node_id"),
        _IDS,
    ),
    "mirrortree.v1.PurgedNodeImpact": (("node_id", "tree_id"), _IDS),
    "mirrortree.v1.Quota": (
        (
            "owner",
            "currency",
            "limit",
            "reserved",
            "spent",
            "remaining",
            "parallel_approval_cost",
            "updated_at",
        ),
        _IDS,
    ),
    "mirrortree.v1.RecordImpact": (("table", "id"), _IDS),
    "mirrortree.v1.RecordReviewResponse": (("result_id", "recorded_at"), _IDS),
    "mirrortree.v1.RecordSourceResponse": (("source_id", "updated_at"), _IDS),
    "mirrortree.v1.SessionContext": (("session_id",), _IDS),
    "mirrortree.v1.Task": (
        (
            "id",
            "tree_id",
            "branch_node_id",
            "deadline",
            "capability_scope",
            "data_scope",
            "observation_id",
            "accepted_answer_id",
            "started_by",
            "created_at",
            "updated_at",
            "estimate_id",
        ),
        _IDS,
    ),
    "mirrortree.v1.TaskBudget": (("currency",), _IDS),
    "mirrortree.v1.TaskLease": (("token", "worker_id", "expires_at"), _IDS),
    "mirrortree.v1.TransitionImpact": (("branch_id",), _IDS),
    "mirrortree.v1.TransplantCopyImpact": (("tree_id", "source_node_id", "copy_node_id"), _IDS),
    "mirrortree.v1.TransplantOriginImpact": (("tree_id", "node_ids"), _IDS),
    "mirrortree.v1.TransplantOrigin": (
        (
            "tree_id",
            "source_tree_id",
            "source_node_id",
            "copies",
            "transplanted_by",
            "transplanted_at",
        ),
        _IDS,
    ),
    "mirrortree.v1.Tree": (
        ("id", "owner", "project_id", "created_at", "updated_at", "default_world"),
        _IDS,
    ),
}
# Fields whose words are kept in a stored response because no purge or revocation forgets them,
# and the service's own phrases.
KEPT_WORDS: dict[str, tuple[tuple[str, ...], str]] = {
    "mirrortree.v1.Tree": (("title",), _NOT_A_BRANCHS),
    "mirrortree.v1.CitationAuthorization": (("redactions",), _NOT_A_BRANCHS),
    "mirrortree.v1.SessionContext": (("context_state",), _NOT_A_BRANCHS),
    "mirrortree.v1.Approval": (("reason",), _NOT_A_BRANCHS),
    "mirrortree.v1.CanonCandidate": (("detail", "review_reason"), _NOT_A_BRANCHS),
    "mirrortree.v1.PurgeTombstone": (
        ("reason",),
        "the purge's own reason: what its tombstone says",
    ),
    "mirrortree.v1.PreferenceImpact": (("subject",), "what a retracted preference was about"),
    "mirrortree.v1.Commitment": (("state_reason",), _SERVICE),
    "mirrortree.v1.MainLineVersion": (("forbidden_effects", "manual_extractions"), _SERVICE),
}


def _message_fields(message: Message) -> Iterator[tuple[FieldDescriptor, Message]]:
    """The set message fields of `message` (map entries aside), each item of a repeated one."""
    for field, value in message.ListFields():
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        entry = field.message_type
        if entry is not None and entry.GetOptions().map_entry:
            continue
        yield from ((field, item) for item in (value if field.is_repeated else [value]))


def refilled(message: Message) -> Iterator[Message]:
    """Every message within `message` (itself included) that has fields a replay fills in,
    outermost first; nothing inside a refilled field."""
    name = message.DESCRIPTOR.full_name
    own = REFILLED.get(name, ())
    if own:
        yield message
    for field, item in _message_fields(message):
        if field.name not in own:
            yield from refilled(item)


def stripped(response: AnyMessage) -> AnyMessage:
    """A copy of `response` without the words a replay fills in."""
    copy = type(response)()
    copy.CopyFrom(response)
    for message in list(refilled(copy)):
        for name in REFILLED[message.DESCRIPTOR.full_name]:
            message.ClearField(name)
    return copy


# Responses stored before stripping began (or by an earlier build during an upgrade), a batch
# of at most $1; rows another transaction holds are left for the next pass.
UNSTRIPPED = """
SELECT key, method, response FROM idempotency_keys
WHERE NOT words_stripped AND response IS NOT NULL
LIMIT $1
FOR UPDATE SKIP LOCKED
"""

STORE_STRIPPED = "UPDATE idempotency_keys SET response = $2, words_stripped = true WHERE key = $1"


async def strip_stored(conn: asyncpg.Connection, batch: int = 500, *, once: bool = False) -> int:
    """Strip the stored responses not stripped yet, in the caller's transaction (all of them,
    or one batch when `once`); how many."""
    methods = tree_pb2.DESCRIPTOR.services_by_name["TreeService"].methods_by_name
    done = 0
    while rows := await conn.fetch(UNSTRIPPED, batch):
        for row in rows:
            method = methods.get(row["method"])
            if method is None:  # an RPC no longer served: nothing can replay it
                kept = b""
            else:
                response = message_factory.GetMessageClass(method.output_type)()
                response.ParseFromString(row["response"])
                kept = stripped(response).SerializeToString()
            await conn.execute(STORE_STRIPPED, row["key"], kept)
        done += len(rows)
        if once:
            break
    return done

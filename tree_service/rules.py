"""The tree service's rules that are not SQL: which node may build on which, what may be cited,
adopted, extended and canonicalized, and how review results name what they point at.

Each rule is a plain function over domain values that returns a value or raises a service
error; the stores call them with what they read. Nothing here imports asyncpg or grpc, so the
rules are unit-tested without a database.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from mirrortree.scopes import ScopeValue
from mirrortree.violations import FieldViolation
from tree_service.domain import (
    AnswerState,
    CanonicalScope,
    Node,
    NodeKind,
    ObjectType,
    Realm,
    RealmChoice,
    RealmPolicyError,
    ReviewResult,
    StoryObject,
    rule_canonical_scope,
)
from tree_service.errors import InvalidInput, PreconditionFailed, RevisionConflict

MAX_CANON_NODES = 1000


def parse_id(value: str, field: str) -> uuid.UUID:
    """An id from a request; a malformed one names its field."""
    try:
        return uuid.UUID(value)
    except ValueError:
        raise InvalidInput.one(field, f"{value!r} is not a valid id (a UUID)") from None


# ---- what builds on what ------------------------------------------------------------------


def expect_context_of(question: Node, assembled_for: str, version_id: str) -> None:
    """An answer records only a context assembled for the question it answers."""
    if assembled_for != question.id:
        raise PreconditionFailed(
            f"context version {version_id!r} was assembled for node {assembled_for!r}, not for "
            f"the question {question.id!r} this answer answers",
            {"field": "context_version_id"},
        )


def expect_kind(node: Node, field: str, *kinds: NodeKind) -> None:
    if node.kind not in kinds:
        wanted = " or ".join(k.value for k in kinds)
        raise PreconditionFailed(
            f"{field} {node.id!r} is a {node.kind.value} node; it must be: {wanted}",
            {"field": field, "kind": node.kind.value},
        )


def expect_settled(node: Node, field: str) -> None:
    """Nothing builds on a bud that is still streaming: its text is not final yet."""
    if node.answer_state is AnswerState.STREAMING:
        raise PreconditionFailed(
            f"{field} {node.id!r} is still streaming; use it once it is sealed or frozen",
            {"field": field},
        )


def expect_same_tree(node: Node, tree_id: str, field: str) -> None:
    if node.tree_id != str(parse_id(tree_id, "tree_id")):
        raise PreconditionFailed(f"{field} {node.id!r} belongs to another tree", {"field": field})


def node_realm(
    choice: RealmChoice, parent: Node | None, default: RealmChoice
) -> tuple[Realm, str | None]:
    """A new node's realm and world: the explicit choice, else the parent's, else the tree
    default; only a world realm keeps a world."""
    if choice.realm is not None:
        realm, world = choice.realm, choice.world
    elif parent is not None:
        realm, world = parent.realm, parent.world
    else:
        assert default.realm is not None
        realm, world = default.realm, default.world
    return realm, world if realm is Realm.WORLD else None


def extension_realm(question: Node, extended: Node, requested: RealmChoice) -> RealmChoice:
    """The realm of an answer that continues `extended`, a frozen answer of `question`.

    An extension continues the extended answer's text, so it stays in that answer's realm and
    world (not the question's); another explicit realm is refused.
    """
    if extended.parent_id != question.id or extended.kind is not NodeKind.ANSWER:
        raise PreconditionFailed(
            f"extends_answer_id {extended.id!r} is not an answer of question {question.id!r}",
            {"field": "extends_answer_id"},
        )
    if extended.answer_state is not AnswerState.FROZEN:
        raise PreconditionFailed(
            f"extends_answer_id {extended.id!r} is {extended.answer_state}; only a "
            "frozen (interrupted) answer is continued",
            {"field": "extends_answer_id"},
        )
    inherited = RealmChoice(extended.realm, extended.world)
    if requested.realm is None:
        return inherited
    if (requested.realm, requested.world) != (extended.realm, extended.world):
        raise PreconditionFailed(
            f"extends_answer_id {extended.id!r} is in realm {extended.realm.value}"
            f"{'/' + extended.world if extended.world else ''}; its extension must "
            "stay there (leave open.realm unset to inherit it)",
            {"field": "open.realm"},
        )
    return requested


def expect_adoptable(question: Node, answer: Node) -> None:
    """An adopted answer is a settled answer of that question with some text."""
    expect_kind(question, "question_id", NodeKind.QUESTION)
    expect_kind(answer, "answer_id", NodeKind.ANSWER)
    if answer.parent_id != question.id:
        raise PreconditionFailed(
            f"answer_id {answer.id!r} answers another question", {"field": "answer_id"}
        )
    expect_settled(answer, "answer_id")
    if not answer.text:
        raise PreconditionFailed(
            f"answer_id {answer.id!r} holds no text: it froze before its first chunk was "
            "acknowledged; continue it or adopt another answer",
            {"field": "answer_id"},
        )


# ---- canonicalization ---------------------------------------------------------------------


def expect_path_within_limit(leaf: Node, path_length: int) -> None:
    if path_length > MAX_CANON_NODES:
        raise PreconditionFailed(
            f"the path to {leaf.id!r} is longer than {MAX_CANON_NODES} nodes; select "
            "the nodes to canonicalize instead",
            {"field": "leaf_node_id"},
        )


def expect_on_one_path(node_ids: Sequence[str], on_path: set[str], leaf: Node) -> None:
    """A main line is one line of the conversation: every selected node must be an ancestor of
    the last one (gaps allowed), never a competing sibling branch."""
    for i, node_id in enumerate(node_ids):
        if str(uuid.UUID(node_id)) not in on_path:
            raise InvalidInput.one(
                f"nodes.node_ids[{i}]",
                f"is not on the path from the root to {leaf.id!r}; selected nodes "
                "must lie on one path (each an ancestor of the next), not on "
                "competing branches",
            )


def with_extended_parts(
    nodes: Iterable[Node], extended: dict[str, list[Node]]
) -> tuple[list[Node], set[str]]:
    """The main line with each extension's frozen parts (oldest first) right before it, since
    an extension completes the frozen answer it continues; and the ids of those parts."""
    whole: list[Node] = []
    parts: set[str] = set()
    for node in nodes:
        parts.update(p.id for p in extended[node.id])
        whole += [*extended[node.id], node]
    return whole, parts


def canonical_scope(nodes: Sequence[Node], parts: set[str]) -> tuple[CanonicalScope, str]:
    """The scope a main line of `nodes` belongs to; only complete answers are canonicalized
    (a frozen part of a selected extension is complete through it)."""
    for node in nodes:
        if node.id not in parts and node.answer_state in (
            AnswerState.STREAMING,
            AnswerState.FROZEN,
        ):
            raise PreconditionFailed(
                f"node {node.id!r} is a {node.answer_state.value} answer; only complete "
                "answers are canonicalized (continue generating, or select another)",
                {"node_id": node.id},
            )
    try:
        return rule_canonical_scope([(n.realm, n.world) for n in nodes])
    except RealmPolicyError as exc:
        raise PreconditionFailed(str(exc), {"reason": "realm_policy"}) from None


# ---- sources and preferences --------------------------------------------------------------


def expect_source_write(
    source_id: str,
    source_type: str,
    expected: int,
    current: tuple[str, int] | None,
) -> None:
    """A source is created at expected revision 0 and replaced at its current revision; it
    keeps its type (`current`: the stored type and revision, None when there is none)."""
    if current is None:
        if expected != 0:
            raise RevisionConflict("source", source_id, expected, 0)
        return
    stored_type, revision = current
    if stored_type != source_type:
        raise InvalidInput.one(
            "source_type",
            f"source {source_id!r} is a {stored_type}; a source keeps its type",
        )
    if expected != revision:
        raise RevisionConflict("source", source_id, expected, revision)


def expect_preference_write(preference_id: str, expected: int, current: int | None) -> None:
    """A preference is created at expected revision 0 and replaced at its current one."""
    if expected != (current or 0):
        raise RevisionConflict("preference", preference_id, expected, current or 0)


# ---- review results -----------------------------------------------------------------------


def preference_applies(scope: ScopeValue, preference_scope_key: str) -> bool:
    """A global preference applies everywhere; a project's applies to scopes holding it."""
    return scope.is_global or preference_scope_key in (
        "global",
        *(ScopeValue.of_projects([p]).key for p in scope.projects),
    )


def missing_ends(review: ReviewResult, found: set[tuple[str, str]]) -> list[FieldViolation]:
    """A violation for each field naming an end that is neither in the result nor `found`."""
    return [
        FieldViolation(
            r.field,
            f"names preference {r.object_id!r}, which does not exist or does not apply to "
            f"{review.scope.describe()}"
            if r.object_type == "preference"
            else f"names {r.object_type} {r.object_id!r}, which is neither in this result "
            f"nor in an earlier result of {review.scope.describe()}",
        )
        for r in review.external_references
        if (r.object_type, r.object_id) not in found
    ]


def source_references(review: ReviewResult) -> list[StoryObject]:
    return [o for o in review.objects if o.object_type is ObjectType.SOURCE_REFERENCE]


def reference_conflict(
    review: ReviewResult, obj: StoryObject, result_id: str, body: str, details: dict[str, Any]
) -> FieldViolation:
    """A source reference id keeps the content it was first recorded with: readers resolve it
    to one saved fragment, so other content under it would change every earlier citation."""
    differs = source_reference_differences(body, details, obj)
    field = review.fields.get(
        (obj.object_type.value, obj.object_id), f"source_reference {obj.object_id}"
    )
    return FieldViolation(
        f"{field}.id",
        f"source reference {obj.object_id!r} was recorded by earlier result "
        f"{result_id!r} of {review.scope.describe()} with another "
        f"{'; '.join(differs)}. A reference id keeps the content it was first "
        "recorded with: cite it with that same content, or record this fragment "
        "under a new id",
    )


def source_reference_differences(body: str, details: dict[str, Any], obj: StoryObject) -> list[str]:
    """What of a source reference differs between an earlier stored copy and `obj`, in the
    request's field names, with short values shown as (earlier, now)."""
    new = obj.details
    differs = []
    if body != obj.body:
        differs.append("fragment")
    for name in ("source_type", "source_id", "source_version"):
        if details.get(name) != new.get(name):
            differs.append(f"{name} ({details.get(name)!r} there, {new.get(name)!r} here)")
    earlier = (details.get("fragment_start"), details.get("fragment_end"))
    now = (new.get("fragment_start"), new.get("fragment_end"))
    if earlier != now:
        differs.append(
            f"fragment range ([{earlier[0]}, {earlier[1]}) there, [{now[0]}, {now[1]}) here)"
        )
    locator_then, locator_now = details.get("locator") or {}, new.get("locator") or {}
    differs.extend(
        f"locator.{name} ({locator_then.get(name)!r} there, {locator_now.get(name)!r} here)"
        for name in sorted(set(locator_then) | set(locator_now))
        if locator_then.get(name) != locator_now.get(name)
    )
    # An older copy may hold details this version no longer writes: then only "content".
    return differs or ["content"]


def pin_ends(
    details: dict[str, Any], recorded: dict[tuple[str, str], dict[str, Any]]
) -> dict[str, Any]:
    """A relation's details with each end pinned to a version: the revision the review gave,
    else the copy recorded by the newest result holding that end (never a guess)."""
    if "relation_kind" not in details:
        return details
    pinned = dict(details)
    for name in ("from", "to"):
        end = dict(details[name])
        if end.get("type"):
            end["version"] = (
                {"revision": end["revision"], "given_by": "review"}
                if end.get("revision")
                else {**recorded.get((end["type"], end["id"]), {}), "given_by": "recorded_copy"}
            )
        pinned[name] = end
    return pinned

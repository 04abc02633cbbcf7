"""The one gate (T17–T20; seed 001 §6, §7): every write that starts, continues, pays for or
performs work asks it in the write's own transaction, and a refusal rolls that transaction
back, so nothing of the work is written.

The gate is where the rules of acting and spending live: no safety stop in effect for the tree,
a real-world action only from a canonicalized node of the real realm with an unused ruling
allowing it, and, when the tree's owner keeps a quota, an estimate named for every costed
request. GATED lists each RPC that spends or acts with the checks it passes; UNGATED every other
RPC with why it does neither. Two things hold the registries to the code: the write frame
(tree_service.primary) runs every write through `guarded`, which rolls back, as an internal
error, a gated write that returns without having asked every check GATED lists; and
tests/unit/tree_service/test_gate.py fails on an RPC in neither registry, or on a request that
can name an estimate or a ruling without the checks for it.

A safety stop locks the tree's row, then its tasks' rows (tree_service.realms); the gate counts
the stops only once the write holds one of those rows (`Hold`), so a write either commits
before the stop or sees it.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol, TypeVar

import asyncpg

from tree_service.domain import Node, Realm
from tree_service.errors import PreconditionFailed
from tree_service.rules import parse_id


class Check(StrEnum):
    SAFETY_STOP = "safety_stop"  # no safety stop in effect for the tree
    QUOTA = "quota"  # a costed request names an estimate when the owner keeps a quota
    REALM = "realm"  # the node's realm and canon state allow the act
    RULING = "ruling"  # an unused arbiter ruling allows exactly this act


@dataclass(frozen=True)
class Passage:
    checks: tuple[Check, ...]
    how: str  # what the gate asks of this RPC, as docs/tree-service.md lists it


_STOP, _QUOTA = Check.SAFETY_STOP, Check.QUOTA
_HELD = (
    "answers `task_stopped` (`safety_stop`) once a stop held the task at its commit; lands "
    "nothing while a stop is in effect"
)

GATED: dict[str, Passage] = {
    "AddAnswer": Passage(
        (_STOP, _QUOTA),
        "refused while a safety stop holds the tree; charged to "
        "`content.conditions.estimate_id`, which an owner's quota makes required",
    ),
    "StreamAnswer": Passage(
        (_STOP, _QUOTA),
        "its `open` as AddAnswer; a stop freezes the bud being streamed (safety_stop)",
    ),
    "AddContinuation": Passage((_STOP, _QUOTA), "as AddAnswer"),
    "CompareCandidates": Passage((_STOP, _QUOTA), "as AddAnswer, with `estimate_id`"),
    "StartTask": Passage(
        (_STOP, _QUOTA),
        "refused while a safety stop holds the tree; reserves `estimate_id`, which an owner's "
        "quota makes required",
    ),
    "ClaimTask": Passage((_STOP,), "never hands out a task of a tree a safety stop holds"),
    "HeartbeatTask": Passage((_STOP,), _HELD),
    "ReportTaskProgress": Passage((_STOP,), _HELD),
    "CompleteTask": Passage((_STOP,), _HELD),
    "FailTask": Passage((_STOP,), _HELD),
    "InstructTask": Passage(
        (_STOP,), "a resume is refused while a safety stop holds the tree (a cancel is not)"
    ),
    "RecordRealAction": Passage(
        (_STOP, Check.REALM, Check.RULING),
        "only from a real-realm node a real-experience main line holds, with an unused "
        "arbiter ruling allowing this action, and while no safety stop holds the tree",
    ),
}

READ_ONLY = "reads only"
_WORDS = "records the user's own words or decisions: no model runs, nothing is spent or done"
_ACCESS = "configures access, sessions or citation grants"
_GRAPH = "records story-graph input the host app produced (its model work happened before)"
ACCOUNTING = "the quota's own accounting; the work it pays for passes the gate"

UNGATED: dict[str, str] = {
    **dict.fromkeys(
        (
            "GetTree",
            "GetNode",
            "GetPath",
            "ListNodes",
            "ListMainLineVersions",
            "GetMainLineSnapshot",
            "GetSettings",
            "GetSessionContext",
            "ListEffects",
            "ListCommitments",
            "GetContextVersion",
            "ListCitations",
            "GetBranch",
            "ListBranches",
            "ListCanonInvitations",
            "ListCanonCandidates",
            "ListMergeReferences",
            "GetTransplantOrigin",
            "GetEstimate",
            "GetQuota",
            "PreviewPurge",
            "GetPurgeTombstone",
            "GetTask",
            "ListTasks",
            "WatchTree",
            "PlanExtraction",
        ),
        READ_ONLY,
    ),
    **dict.fromkeys(
        (
            "CreateTree",
            "AskQuestion",
            "EditQuestion",
            "AdoptAnswer",
            "Canonicalize",
            "RecordContextSummary",
            "AssembleContext",
            "SetBranchState",
            "InviteCanonicalization",
            "DeclineCanonInvitation",
            "AcceptCanonCandidate",
            "RejectCanonCandidate",
            "MergeByReference",
            "TransplantBranch",
            "Purge",
            "AcceptObservation",
        ),
        _WORDS,
    ),
    **dict.fromkeys(
        (
            "SetAppEnabled",
            "SetCapability",
            "SetSessionStoryGraph",
            "SaveSessionContext",
            "CreateBinding",
            "GrantCitationAuthorization",
            "RevokeCitationAuthorization",
        ),
        _ACCESS,
    ),
    **dict.fromkeys(("RecordReview", "RecordSource", "SetPreference"), _GRAPH),
    **dict.fromkeys(
        ("EstimateRequest", "ApproveEstimate", "ChargeEstimate", "SettleCharge", "SetQuota"),
        ACCOUNTING,
    ),
    "RecordArbiterRuling": "records an arbiter's ruling (the user's grant); RecordRealAction "
    "spends it at the gate",
    "RecordCommitment": "states a commitment; a safety stop takes effect in its own write",
    "ConfirmCommitment": "confirms an authorization, which acts only through RecordRealAction",
    "WithdrawCommitment": "withdrawing a safety stop must stay possible while it holds",
}


# ---- refusals ---------------------------------------------------------------------------------


class SafetyStopInEffect(PreconditionFailed):
    """A safety stop stated in the tree holds the work or the act; nothing was written."""

    reason = "safety_stop_in_effect"

    @classmethod
    def of(cls, stops: int, tree_id: str, held: str) -> SafetyStopInEffect:
        return cls(
            f"{stops} safety stop(s) stated in tree {tree_id} hold {held}; withdraw the stop "
            "(WithdrawCommitment) first",
            {"tree_id": tree_id, "safety_stops": str(stops)},
        )


class RealmNotReal(PreconditionFailed):
    """A real-world action from a world or rehearsal node; nothing was written."""

    reason = "realm_not_real"


class NotCanonicalized(PreconditionFailed):
    """A real-world action from a node no real-experience main line holds; nothing was
    written."""

    reason = "not_canonicalized"


class RulingRequired(PreconditionFailed):
    """A real-world action without an unused allowing arbiter ruling; nothing was written."""

    reason = "ruling_required"


class EstimateRequired(PreconditionFailed):
    """The tree's owner has a quota, so a request that spends must name the estimate it is
    charged against; nothing was written."""

    reason = "estimate_required"


# ---- what each write asked --------------------------------------------------------------------

_asked: ContextVar[set[Check] | None] = ContextVar("gate_asked", default=None)
R = TypeVar("R")


def _ask(*checks: Check) -> None:
    asked = _asked.get()
    if asked is not None:
        asked.update(checks)


def nothing_to_admit() -> None:
    """The write found no work to hand out or do (a claim with nothing claimable): it passes
    the gate without a question."""
    _ask(*Check)


async def guarded(method: str, action: Callable[[Any], Awaitable[R]], conn: Any) -> R:
    """Run a write's action in its transaction, holding a gated one to its passage: an action
    that returns without having asked the gate every check GATED lists is an error, and its
    transaction rolls back."""
    passage = GATED.get(method)
    if passage is None:
        return await action(conn)
    token = _asked.set(set())
    try:
        result = await action(conn)
        asked = _asked.get() or set()
        missing = [c.value for c in passage.checks if c not in asked]
        if missing:
            raise RuntimeError(f"{method} wrote without asking the gate: {', '.join(missing)}")
        return result
    finally:
        _asked.reset(token)


# ---- safety stops -----------------------------------------------------------------------------


class Hold(StrEnum):
    """What the asking write holds of the tree, so that a safety stop cannot commit unseen
    between the question and the write's commit (a stop locks the tree's row, then its tasks'
    rows). The stops are always counted by a statement that starts after the lock is held: one
    that waited for a stop's lock would still read with the snapshot it started with."""

    TASK = "task"  # the task's row, locked already: a stop must wait for it to hold the task
    SHARE = "share"  # the tree's row, shared (taken here): a write inserting beside the tree
    APPENDED = "appended"  # the tree's row, locked by the node the write appended already


_LOCKS = {Hold.SHARE: "SELECT 1 FROM trees WHERE id = $1 FOR SHARE"}
_STOPS_OF = """
SELECT count(*) FROM commitments
WHERE tree_id = $1 AND kind = 'safety_stop' AND withdrawn_at IS NULL
"""
# The stops in effect for tree $1, its owner and whether they keep a quota, in one read.
_STOPS_AND_QUOTA = """
SELECT (SELECT count(*) FROM commitments c
        WHERE c.tree_id = t.id AND c.kind = 'safety_stop' AND c.withdrawn_at IS NULL) AS stops,
       t.owner, EXISTS (SELECT 1 FROM quotas q WHERE q.owner = t.owner) AS has_quota
FROM trees t WHERE t.id = $1
"""


async def safety_stops(conn: asyncpg.Connection, tree_id: str, hold: Hold) -> int:
    """How many safety stops are in effect for the tree (seed 001 §7: at once)."""
    _ask(Check.SAFETY_STOP)
    tree = uuid.UUID(tree_id)
    if hold in _LOCKS:
        await conn.execute(_LOCKS[hold], tree)
    found: int = await conn.fetchval(_STOPS_OF, tree)
    return found


async def expect_no_safety_stop(
    conn: asyncpg.Connection, tree_id: str, hold: Hold, held: str
) -> None:
    """Refuse `held` (what the write would do) while a safety stop is in effect."""
    stops = await safety_stops(conn, tree_id, hold)
    if stops:
        raise SafetyStopInEffect.of(stops, tree_id, held)


@dataclass(frozen=True)
class Cost:
    """What a costed request names: its estimate (or none), the field that names it, and what
    it may be estimated as ("regenerate of <question>", …)."""

    estimate_id: str | None
    field: str
    wanted: str


async def admit_work(
    conn: asyncpg.Connection, tree_id: str, hold: Hold, cost: Cost, held: str
) -> None:
    """Work the tree's model or workers do (`held`): refused while a safety stop is in effect,
    and, when it names no estimate, while the tree's owner keeps a quota. A named estimate is
    then the caller's to charge (tree_service.costs.charges: that it is of this operation and
    target, and fits the quota). An owner without a quota keeps no account of spending."""
    _ask(Check.SAFETY_STOP, Check.QUOTA)
    tree = uuid.UUID(tree_id)
    if hold in _LOCKS:
        await conn.execute(_LOCKS[hold], tree)
    found = await conn.fetchrow(_STOPS_AND_QUOTA, tree)
    if found["stops"]:
        raise SafetyStopInEffect.of(found["stops"], tree_id, held)
    if not cost.estimate_id and found["has_quota"]:
        raise EstimateRequired(
            f"{cost.field} is required: the owner {found['owner']!r} of tree {tree_id} has a "
            f"quota, so this request ({cost.wanted}) must name the estimate it is charged "
            "against (EstimateRequest)",
            {"field": cost.field, "owner": found["owner"]},
        )


# ---- real-world actions -----------------------------------------------------------------------


class RulingOnRecord(Protocol):
    """What the gate reads of an arbiter's ruling."""

    @property
    def id(self) -> str: ...
    @property
    def node_id(self) -> str: ...
    @property
    def arbiter(self) -> str: ...
    @property
    def action(self) -> str: ...
    @property
    def allowed(self) -> bool: ...
    @property
    def reason(self) -> str: ...


@dataclass(frozen=True)
class _Ruling:
    id: str
    node_id: str
    arbiter: str
    action: str
    allowed: bool
    reason: str


# Real-world actions and safety stops of one tree serialize on the tree row (NO KEY UPDATE, so
# node appends' foreign-key checks are not blocked), so a stop and an action never cross; a
# stop takes this lock too (tree_service.realms).
LOCK_TREE = "SELECT id FROM trees WHERE id = $1 FOR NO KEY UPDATE"
_RULING = (
    "SELECT id::text, node_id::text, arbiter, action, allowed, reason "
    "FROM arbiter_rulings WHERE id = $1"
)
# The effect ruling $1 authorized, if any (actions of a tree serialize on its row).
_EFFECT_OF_RULING = "SELECT id::text FROM effects WHERE ruling_id = $1 LIMIT 1"
_CANONICALIZED_IN = """
SELECT id::text FROM main_line_versions
WHERE tree_id = $1 AND scope = 'real_experience' AND $2 = any(node_ids)
ORDER BY version LIMIT 1
"""


async def admit_real_action(
    conn: asyncpg.Connection, node: Node, ruling_id: str, action: str
) -> str:
    """The real-experience version that lets `node` act, once the realm, the main line, the
    ruling and the safety stops allow `action` (else refused); the tree's row stays locked, so
    actions of a tree and its safety stops serialize."""
    _ask(Check.SAFETY_STOP, Check.REALM, Check.RULING)
    tree = uuid.UUID(node.tree_id)
    await conn.execute(LOCK_TREE, tree)
    ruling = parse_id(ruling_id, "ruling_id")
    row = await conn.fetchrow(_RULING, ruling)
    version = await conn.fetchval(_CANONICALIZED_IN, tree, uuid.UUID(node.id))
    expect_action_allowed(
        node,
        version,
        _Ruling(**dict(row)) if row is not None else None,
        action,
        stops=await conn.fetchval(_STOPS_OF, tree),
        ruling_id=ruling_id,
        used_by=await conn.fetchval(_EFFECT_OF_RULING, ruling),
    )
    assert version is not None
    return str(version)


def expect_action_allowed(
    node: Node,
    canonicalized_in: str | None,
    ruling: RulingOnRecord | None,
    action: str,
    *,
    stops: int,
    ruling_id: str,
    used_by: str | None = None,
) -> None:
    """Refuse a real-world action that the realm, the main line, the ruling or a safety stop
    forbids; `used_by` is the effect the ruling authorized already, if any (a ruling allows
    one action)."""
    if node.realm is not Realm.REAL:
        where = f"world {node.world!r}" if node.realm is Realm.WORLD else "a rehearsal"
        raise RealmNotReal(
            f"node {node.id!r} belongs to {where}: words may enter illusion, actions must return "
            "to truth; ask for the action again from a node of the real realm",
            {"field": "node_id", "realm": node.realm.value},
        )
    if canonicalized_in is None:
        raise NotCanonicalized(
            f"node {node.id!r} is not on a confirmed real-experience main line: nothing "
            "un-canonicalized acts in the real world; canonicalize its path first",
            {"field": "node_id"},
        )
    if ruling is None or ruling.node_id != node.id:
        raise RulingRequired(
            f"no arbiter ruling {ruling_id!r} is on record for node {node.id!r}; record the "
            "arbiter's ruling on this action first",
            {"field": "ruling_id"},
        )
    if not ruling.allowed:
        raise RulingRequired(
            f"the arbiter {ruling.arbiter!r} refused this action: {ruling.reason}",
            {"field": "ruling_id", "allowed": "false"},
        )
    if used_by is not None:
        raise RulingRequired(
            f"ruling {ruling.id!r} authorized effect {used_by!r} already: a ruling allows one "
            "action; record the arbiter's ruling on this one",
            {"field": "ruling_id", "effect_id": used_by},
        )
    if ruling.action != action:
        raise RulingRequired(
            f"ruling {ruling.id!r} is on the action {ruling.action!r}, not {action!r}",
            {"field": "action"},
        )
    if stops:
        raise SafetyStopInEffect(
            f"{stops} safety stop(s) stated in this tree hold every real-world action; "
            "withdraw the stop before acting",
            {"safety_stops": str(stops)},
        )

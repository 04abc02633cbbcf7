"""The proto numbers of answer lifecycle and branch states (imported by tree_service.convert,
so this module imports no other of the service's modules but the rules)."""

from __future__ import annotations

from mirrortree.v1 import tree_pb2
from tree_service.lifecycle.rules import AnswerLifecycle, BranchState

LIFECYCLE_TO_PROTO = {
    AnswerLifecycle.CANDIDATE: tree_pb2.CANDIDATE,
    AnswerLifecycle.ADOPTED: tree_pb2.ADOPTED,
    AnswerLifecycle.IN_EXPLORATION: tree_pb2.IN_EXPLORATION,
    AnswerLifecycle.CANONICALIZED: tree_pb2.CANONICALIZED,
}
LIFECYCLE_FROM_PROTO: dict[int, AnswerLifecycle] = {v: k for k, v in LIFECYCLE_TO_PROTO.items()}
STATE_TO_PROTO = {
    BranchState.ACTIVE: tree_pb2.ACTIVE,
    BranchState.PAUSED: tree_pb2.PAUSED,
    BranchState.CONCLUDED: tree_pb2.CONCLUDED,
    BranchState.ARCHIVED: tree_pb2.ARCHIVED,
    BranchState.PURGED: tree_pb2.PURGED,
}
STATE_FROM_PROTO: dict[int, BranchState] = {v: k for k, v in STATE_TO_PROTO.items()}

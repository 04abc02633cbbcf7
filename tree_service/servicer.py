"""gRPC TreeService: the RPC groups of each aggregate composed into one servicer, and the one
table that maps the service's errors to status codes for every RPC."""

from __future__ import annotations

import grpc

from mirrortree import rpcstatus
from mirrortree.v1 import tree_pb2, tree_pb2_grpc
from tree_service.access.rpc import AccessRpcs
from tree_service.buds.rpc import BudRpcs
from tree_service.citations.rpc import CitationRpcs
from tree_service.context_assembly.layers import ContextOverBudget
from tree_service.context_assembly.rpc import ContextRpcs
from tree_service.conversation.rpc import ConversationRpcs
from tree_service.costs.rpc import CostRpcs
from tree_service.costs.rules import ApprovalRequired, EstimateNotApplicable, QuotaExceeded
from tree_service.errors import (
    Contention,
    IdempotencyKeyReused,
    InvalidInput,
    NotFound,
    PreconditionFailed,
    RevisionConflict,
    TreeServiceError,
)
from tree_service.ingestion.rpc import IngestionRpcs
from tree_service.leaves.rpc import LeafRpcs
from tree_service.lifecycle.canon_rpc import CanonReviewRpcs
from tree_service.lifecycle.merge_rpc import MergeRpcs
from tree_service.lifecycle.purge_rpc import PurgeRpcs
from tree_service.lifecycle.purge_rules import PurgePreviewStale
from tree_service.lifecycle.rpc import LifecycleRpcs
from tree_service.lifecycle.transplant_rpc import TransplantRpcs
from tree_service.realms.rpc import RealmRpcs
from tree_service.realms.rules import (
    NotCanonicalized,
    RealmNotReal,
    RulingRequired,
    SafetyStopInEffect,
)
from tree_service.tasks.rpc import TaskRpcs
from tree_service.tasks.rules import BranchClosed, LeaseLost, TaskStopped

STATUS_BY_ERROR: dict[type[TreeServiceError], grpc.StatusCode] = {
    InvalidInput: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    PreconditionFailed: grpc.StatusCode.FAILED_PRECONDITION,
    RevisionConflict: grpc.StatusCode.ABORTED,
    Contention: grpc.StatusCode.ABORTED,
    IdempotencyKeyReused: grpc.StatusCode.ALREADY_EXISTS,
    RealmNotReal: grpc.StatusCode.FAILED_PRECONDITION,
    NotCanonicalized: grpc.StatusCode.FAILED_PRECONDITION,
    RulingRequired: grpc.StatusCode.FAILED_PRECONDITION,
    SafetyStopInEffect: grpc.StatusCode.FAILED_PRECONDITION,
    ContextOverBudget: grpc.StatusCode.FAILED_PRECONDITION,
    QuotaExceeded: grpc.StatusCode.FAILED_PRECONDITION,
    ApprovalRequired: grpc.StatusCode.FAILED_PRECONDITION,
    EstimateNotApplicable: grpc.StatusCode.FAILED_PRECONDITION,
    PurgePreviewStale: grpc.StatusCode.ABORTED,
    BranchClosed: grpc.StatusCode.FAILED_PRECONDITION,
    LeaseLost: grpc.StatusCode.FAILED_PRECONDITION,
    TaskStopped: grpc.StatusCode.FAILED_PRECONDITION,
}


@rpcstatus.maps_errors(
    tree_pb2.DESCRIPTOR.services_by_name["TreeService"], TreeServiceError, STATUS_BY_ERROR
)
class TreeServicer(
    ConversationRpcs,
    BudRpcs,
    IngestionRpcs,
    AccessRpcs,
    RealmRpcs,
    ContextRpcs,
    CitationRpcs,
    LifecycleRpcs,
    CanonReviewRpcs,
    MergeRpcs,
    TransplantRpcs,
    CostRpcs,
    PurgeRpcs,
    TaskRpcs,
    LeafRpcs,
    tree_pb2_grpc.TreeServiceServicer,
):
    """TreeService over the stores on the primary."""

"""gRPC TreeService: the RPC groups of each aggregate composed into one servicer, and the one
table that maps the service's errors to status codes for every RPC."""

from __future__ import annotations

import grpc

from mirrortree import rpcstatus
from mirrortree.v1 import tree_pb2, tree_pb2_grpc
from tree_service.access.rpc import AccessRpcs
from tree_service.buds.rpc import BudRpcs
from tree_service.canon.rpc import CanonRpcs
from tree_service.citations.rpc import CitationRpcs
from tree_service.context_assembly.rpc import ContextRpcs
from tree_service.conversation.rpc import ConversationRpcs
from tree_service.costs.rpc import CostRpcs
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
from tree_service.lifecycle.merge_rpc import MergeRpcs
from tree_service.lifecycle.purge_rpc import PurgeRpcs
from tree_service.lifecycle.rpc import LifecycleRpcs
from tree_service.lifecycle.transplant_rpc import TransplantRpcs
from tree_service.realms.rpc import RealmRpcs
from tree_service.tasks.rpc import TaskRpcs

# The base classes of tree_service.errors; every other error of the service subclasses one of
# them (QuotaExceeded is a PreconditionFailed, PurgePreviewStale a RevisionConflict) and is
# answered like it, with its own reason.
STATUS_BY_ERROR: dict[type[TreeServiceError], grpc.StatusCode] = {
    InvalidInput: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    PreconditionFailed: grpc.StatusCode.FAILED_PRECONDITION,
    RevisionConflict: grpc.StatusCode.ABORTED,
    Contention: grpc.StatusCode.ABORTED,
    IdempotencyKeyReused: grpc.StatusCode.ALREADY_EXISTS,
}


@rpcstatus.maps_errors(
    tree_pb2.DESCRIPTOR.services_by_name["TreeService"], TreeServiceError, STATUS_BY_ERROR
)
class TreeServicer(
    ConversationRpcs,
    CanonRpcs,
    BudRpcs,
    IngestionRpcs,
    AccessRpcs,
    RealmRpcs,
    ContextRpcs,
    CitationRpcs,
    LifecycleRpcs,
    MergeRpcs,
    TransplantRpcs,
    CostRpcs,
    PurgeRpcs,
    TaskRpcs,
    LeafRpcs,
    tree_pb2_grpc.TreeServiceServicer,
):
    """TreeService over the stores on the primary."""

"""The story graph's stored names for shared proto enums, in one place for writer and reader.

tree_service stores these names (proto → name); graph_service turns them back into enum values
(name → proto). One table keeps the two directions from drifting apart.
"""

from __future__ import annotations

from mirrortree.object_types import OBJECT_TYPE_NAMES, OBJECT_TYPE_RANKS
from mirrortree.v1 import common_pb2

CONFIRMATION_NAMES: dict[int, str] = {
    common_pb2.AUTO_GENERATED: "auto_generated",
    common_pb2.CONFIRMED: "confirmed",
    common_pb2.USER_REVISED: "user_revised",
    common_pb2.RETRACTED: "retracted",
}
CONFIRMATION_VALUES: dict[str, int] = {v: k for k, v in CONFIRMATION_NAMES.items()}

PRECISION_NAMES: dict[int, str] = {
    common_pb2.INSTANT: "instant",
    common_pb2.MINUTE: "minute",
    common_pb2.HOUR: "hour",
    common_pb2.DAY: "day",
    common_pb2.MONTH: "month",
    common_pb2.YEAR: "year",
}
PRECISION_VALUES: dict[str, int] = {v: k for k, v in PRECISION_NAMES.items()}

__all__ = [
    "CONFIRMATION_NAMES",
    "CONFIRMATION_VALUES",
    "OBJECT_TYPE_NAMES",
    "OBJECT_TYPE_RANKS",
    "PRECISION_NAMES",
    "PRECISION_VALUES",
]

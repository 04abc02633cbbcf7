"""When a replica may take reads without a consistency token, and what a read refused for
staleness says.

A replica is fresh while it is no more than `max_lag_bytes` of WAL behind the primary; while the
primary answers, it must also not have been cut from it (no WAL receiver connected) for longer
than `primary_grace_s` — cut off, it falls further behind with every write, and while the
primary writes nothing no lag shows it. Once the primary's position is unknown (it has not
answered for longer than the grace, or, with no primary configured, the replica has been cut
past it), the last commit it replayed must be no older than `max_replay_age_s`: its position is
then the last one known, and being cut off is no sign either, as every replica is when the
primary is down.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graph_service.errors import ConsistencyTimeout

if TYPE_CHECKING:
    from graph_service.replicas import Replica

DEFAULT_MAX_LAG_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_REPLAY_AGE_S = 300.0
DEFAULT_PRIMARY_GRACE_S = 30.0


@dataclass
class Freshness:
    max_lag_bytes: int = DEFAULT_MAX_LAG_BYTES
    max_replay_age_s: float = DEFAULT_MAX_REPLAY_AGE_S
    primary_grace_s: float = DEFAULT_PRIMARY_GRACE_S
    has_primary: bool = False  # a primary DSN is configured
    # Since when (monotonic) the primary has not answered: None while it answers (or none is
    # configured). The router's monitor sets it.
    primary_lost_at: float | None = None

    def primary_unreachable_s(self) -> float | None:
        """How long the primary has not answered; None while it answers or when no primary is
        configured (lag is then measured against the replicas alone)."""
        if self.primary_lost_at is None:
            return None
        return time.monotonic() - self.primary_lost_at

    @staticmethod
    def replay_age(replica: Replica) -> float | None:
        """Seconds since the last commit `replica` replayed, now (None: none replayed)."""
        if replica.replayed_at is None:
            return None
        return time.monotonic() - replica.replayed_at

    @staticmethod
    def cut_from_primary_s(replica: Replica) -> float | None:
        """Seconds `replica` has been without a WAL receiver connected to the primary, as its
        checks found (None: it has one)."""
        if replica.cut_at is None:
            return None
        return time.monotonic() - replica.cut_at

    def fresh(self, replica: Replica) -> bool:
        """Within the bounds for reads without a token (the module's rule)."""
        if replica.lag_bytes > self.max_lag_bytes:
            return False
        if replica.is_primary:
            return True
        lost = self.primary_unreachable_s()
        if lost is None:
            cut = self.cut_from_primary_s(replica)
            if cut is None or cut <= self.primary_grace_s:
                return True
            if self.has_primary:
                return False
        elif lost <= self.primary_grace_s:
            return True
        age = self.replay_age(replica)
        return age is not None and age <= self.max_replay_age_s

    def too_stale(self, up: list[Replica]) -> ConsistencyTimeout:
        """The refusal of a read that found none of the `up` replicas fresh: each bound that
        took them out, with each replica's figure (`cause=replica_lag`)."""
        lost = self.primary_unreachable_s()
        grace = self.primary_grace_s
        metadata = {
            "cause": "replica_lag",
            "max_lag_bytes": str(self.max_lag_bytes),
            "lag_bytes": ",".join(f"{r.name}={r.lag_bytes}" for r in up),
        }
        why = f"more than {self.max_lag_bytes} bytes of WAL behind the primary"
        cuts = ((r.name, self.cut_from_primary_s(r)) for r in up)
        cut = [(name, s) for name, s in cuts if s is not None and s > grace]
        if lost is None and cut:
            metadata["primary_grace_s"] = f"{grace:g}"
            metadata["cut_from_primary_s"] = ",".join(f"{name}={s:.0f}" for name, s in cut)
            why += (
                f", or has had no WAL receiver connected to the primary for more than {grace:g} s"
            )
        unknown_position = lost is not None and lost > grace
        if lost is None and cut and not self.has_primary:
            unknown_position = True  # no primary to ask: cut off, its replay age decides
        if unknown_position:
            ages = ((r.name, self.replay_age(r)) for r in up)
            if lost is not None:
                metadata["primary_unreachable_s"] = f"{lost:.0f}"
            metadata["max_replay_age_s"] = f"{self.max_replay_age_s:g}"
            metadata["replay_age_s"] = ",".join(
                f"{name}={'none' if age is None else f'{age:.0f}'}" for name, age in ages
            )
            where = (
                f"with the primary unreachable for {lost:.0f} s"
                if lost is not None
                else "cut from the primary"
            )
            why += (
                f", or, {where}, last replayed a commit more than {self.max_replay_age_s:g} s ago"
            )
        return ConsistencyTimeout(f"every replica is {why}; retry shortly", metadata)

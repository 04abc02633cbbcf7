"""The per-binding call rate limit of the gateway: a token bucket per binding token.

A runtime stuck in a loop (or a leaked token) must not be able to take the story graph's
capacity from every other binding; past its budget a call is refused at once as the tool error
`rate_limited` with the seconds to wait, and nothing reaches graph_service.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from dataclasses import dataclass, field

# Buckets kept at most; the least recently used is dropped first (a dropped bucket is full).
MAX_BUCKETS = 10_000


@dataclass
class RateLimiter:
    """`per_minute` calls a minute per binding, in bursts of up to `burst`."""

    per_minute: int
    burst: int
    _buckets: OrderedDict[bytes, tuple[float, float]] = field(default_factory=OrderedDict)

    def __post_init__(self) -> None:
        if self.per_minute < 1 or self.burst < 1:
            raise ValueError("the rate limit and its burst must be at least 1")

    def take(self, token: str, now: float | None = None) -> float:
        """Spend one call of token's budget: 0 when allowed, else the seconds until it is."""
        now = time.monotonic() if now is None else now
        key = hashlib.sha256(token.encode()).digest()
        rate = self.per_minute / 60
        tokens, last = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * rate)
        if tokens >= 1:
            tokens -= 1
            wait = 0.0
        else:
            wait = (1 - tokens) / rate
        self._buckets[key] = (tokens, now)
        while len(self._buckets) > MAX_BUCKETS:
            self._buckets.popitem(last=False)
        return wait

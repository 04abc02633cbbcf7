"""The soak's samples: each service's resident memory and each PostgreSQL server's client
connections, every few seconds through a long run, and whether they grew."""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg

# Client backends by who opened them: the services' pools are what could leak.
CONNECTIONS_SQL = (
    "SELECT count(*) FROM pg_stat_activity "
    "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
)


def rss_mb(pid: int) -> float | None:
    """Resident memory of a live process (Linux /proc), MB; None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        return None
    return None


@dataclass
class Soak:
    """Samples series by name ("<service> RSS MB", "<server> connections") over time."""

    pids: dict[str, int]
    dsns: dict[str, str]
    interval_s: float
    started: float = field(default_factory=time.monotonic)
    times: list[float] = field(default_factory=list)
    series: dict[str, list[float | None]] = field(default_factory=dict)

    async def sample(self) -> None:
        row: dict[str, float | None] = {f"{n} RSS MB": rss_mb(p) for n, p in self.pids.items()}
        for name, dsn in self.dsns.items():
            try:
                connection = await asyncpg.connect(dsn, timeout=10)
                try:
                    row[f"{name} connections"] = float(await connection.fetchval(CONNECTIONS_SQL))
                finally:
                    await connection.close()
            except (OSError, asyncpg.PostgresError, TimeoutError):
                row[f"{name} connections"] = None
        self.times.append(time.monotonic() - self.started)
        for key, value in row.items():
            self.series.setdefault(key, []).append(value)

    async def run(self, stop: asyncio.Event) -> None:
        """Sample now and every interval until stop is set, and once more after it."""
        while True:
            await self.sample()
            try:
                await asyncio.wait_for(stop.wait(), self.interval_s)
            except TimeoutError:
                continue
            await self.sample()
            return

    def summary(self) -> dict[str, Any]:
        """Per series: the first sample after the warm-up quarter, the peak, the last, the
        last over the first (growth) and the trend; the samples themselves.

        The trend is the least-squares slope of the samples after the warm-up, per hour: a
        process's memory moves a few MB up and down with its work from one sample to the next,
        so two samples alone cannot tell a level that wavers from a slow climb."""
        rows = []
        for name, values in self.series.items():
            timed = [(t, v) for t, v in zip(self.times, values, strict=True) if v is not None]
            if not timed:
                rows.append({"series": name, "missing": len(values)})
                continue
            settled_timed = timed[len(timed) // 4 :] or timed
            settled = [v for _, v in settled_timed]
            first, last = settled[0], settled[-1]
            rows.append(
                {
                    "series": name,
                    "first": round(first, 1),
                    "max": round(max(settled), 1),
                    "last": round(last, 1),
                    "growth": round(last / first, 2) if first else None,
                    "trend_per_hour": trend_per_hour(settled_timed),
                    "missing": len(values) - len(timed),
                }
            )
        return {
            "interval_s": self.interval_s,
            "times_s": [round(t, 1) for t in self.times],
            "series": rows,
            "samples": {
                k: [None if v is None else round(v, 1) for v in vs] for k, vs in self.series.items()
            },
        }


def trend_per_hour(samples: list[tuple[float, float]]) -> float | None:
    """The least-squares slope of (seconds, value) samples, per hour; None without two times."""
    times = [t for t, _ in samples]
    if len(set(times)) < 2:
        return None
    slope, _ = statistics.linear_regression(times, [v for _, v in samples])
    return round(slope * 3600, 2)


def markdown(summary: dict[str, Any]) -> str:
    lines = [
        "",
        f"Soak: {len(summary['times_s'])} samples, every {summary['interval_s']:g} s (first "
        "counted after a warm-up quarter of the run):",
        "",
        "| series | first | max | last | last ÷ first | trend per hour | missed samples |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in summary["series"]:
        if "first" not in row:
            lines.append(f"| {row['series']} | – | – | – | – | – | {row['missing']} |")
            continue
        growth = "–" if row["growth"] is None else f"{row['growth']}×"
        trend = "–" if row["trend_per_hour"] is None else f"{row['trend_per_hour']:+g}"
        lines.append(
            f"| {row['series']} | {row['first']} | {row['max']} | {row['last']} | {growth} | "
            f"{trend} | {row['missing']} |"
        )
    return "\n".join(lines) + "\n"

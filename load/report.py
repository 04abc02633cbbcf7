"""The run's report: per-operation throughput and latency percentiles, errors by reason, the
deliberate conflicts apart, and the zero-lost verification; as Markdown and as JSON."""

from __future__ import annotations

from collections import Counter
from typing import Any

from locust.stats import RequestStats

from load.verify import Verification
from load.workload import BASELINE


def build(
    stats: RequestStats,
    *,
    seconds: float,
    errors: Counter[tuple[str, str]],
    conflicts: Counter[str],
    verification: Verification,
    setup: dict[str, Any],
) -> dict[str, Any]:
    operations = []
    base = stats.entries.get((BASELINE, "call"))
    base_p50 = base.get_response_time_percentile(0.50) if base and base.num_requests else 0
    for (name, kind), entry in sorted(stats.entries.items()):
        operations.append(
            {
                "operation": name,
                "kind": kind,
                "calls": entry.num_requests,
                "failures": entry.num_failures,
                "per_s": round(entry.num_requests / seconds, 2) if seconds else 0.0,
                "p50_ms": entry.get_response_time_percentile(0.50),
                "p95_ms": entry.get_response_time_percentile(0.95),
                "p99_ms": entry.get_response_time_percentile(0.99),
                # p50 over the baseline's p50: latency beyond a bare round trip on this host.
                "p50_x_baseline": (
                    round(entry.get_response_time_percentile(0.50) / base_p50, 1)
                    if base_p50
                    else None
                ),
            }
        )
    total = stats.total
    return {
        "setup": setup,
        "seconds": round(seconds, 1),
        "calls": total.num_requests,
        "calls_per_s": round(total.num_requests / seconds, 2) if seconds else 0.0,
        "failures": sum(errors.values()),
        "operations": operations,
        "errors": [
            {"operation": op, "reason": reason, "count": n}
            for (op, reason), n in sorted(errors.items())
        ],
        "deliberate_conflicts": dict(sorted(conflicts.items())),
        "verification": {
            "checked": dict(sorted(verification.checked.items())),
            "lost": verification.lost,
            "ok": verification.ok,
        },
    }


def markdown(report: dict[str, Any]) -> str:
    setup = report["setup"]
    lines = [
        f"Mixed load: {setup['users']} users, {setup['rate']} steps/s in all, mix "
        f"{setup['mix']}, {report['seconds']} s: {report['calls']} calls "
        f"({report['calls_per_s']}/s), {report['failures']} failed.",
        "",
        "| operation | calls | calls/s | p50 ms | p95 ms | p99 ms | p50 ÷ baseline p50 | failed |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for op in report["operations"]:
        name = op["operation"] + (" (deliberate conflict)" if op["kind"] == "conflict" else "")
        ratio = "–" if op["p50_x_baseline"] is None else f"{op['p50_x_baseline']}×"
        lines.append(
            f"| {name} | {op['calls']} | {op['per_s']} | {op['p50_ms']:.0f} | "
            f"{op['p95_ms']:.0f} | {op['p99_ms']:.0f} | {ratio} | {op['failures']} |"
        )
    lines += ["", "Errors by reason:" if report["errors"] else "Errors by reason: none."]
    lines += [f"- {e['operation']}: {e['reason']} × {e['count']}" for e in report["errors"]]
    conflicts = report["deliberate_conflicts"]
    lines.append(
        "Deliberate revision conflicts (stale expected revision, refused as meant): "
        + (", ".join(f"{k} × {v}" for k, v in conflicts.items()) or "none")
        + "."
    )
    check = report["verification"]
    checked = ", ".join(f"{what} × {n}" for what, n in check["checked"].items())
    verdict = "zero lost" if check["ok"] else f"{len(check['lost'])} LOST"
    lines += ["", f"Verification: read back {checked}: {verdict}."]
    lines += [f"- lost: {line}" for line in check["lost"][:50]]
    return "\n".join(lines) + "\n"

"""The run's report: per-operation throughput and latency percentiles with p50 as a multiple of
the raw baselines measured in the same run, the baselines themselves, errors by reason, the
deliberate conflicts apart, and the zero-lost verification; as Markdown and as JSON."""

from __future__ import annotations

from collections import Counter
from typing import Any

from locust.stats import RequestStats

from bench.baselines import Baseline, call_name, combined, query_name
from load.verify import Verification

# The ratios' baseline, as bench.run's: what a story-graph read pays at least, a round trip to
# graph_service and a point query on a replica.
RATIO_SERVICE, RATIO_SERVER = "graph_service", "replica"


def build(
    stats: RequestStats,
    *,
    seconds: float,
    errors: Counter[tuple[str, str]],
    conflicts: Counter[str],
    verification: Verification,
    setup: dict[str, Any],
    baselines: list[Baseline],
) -> dict[str, Any]:
    operations = []
    measured = {b.target: b.measured for b in baselines}
    empty, query = measured.get(RATIO_SERVICE), measured.get(RATIO_SERVER)
    base_p50 = round(combined(empty, query)[0], 3) if empty is not None else 0.0
    base_is = call_name(RATIO_SERVICE) + (f" + {query_name(RATIO_SERVER)}" if query else "")
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
        "baselines": [baseline_row(b) for b in baselines],
        "baseline": {"is": base_is, "p50_ms": base_p50} if base_p50 else None,
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


def baseline_row(baseline: Baseline) -> dict[str, Any]:
    if baseline.measured is None:
        return {"baseline": baseline.name, "not_measured": baseline.not_measured}
    return {
        "baseline": baseline.name,
        "p50_ms": round(baseline.measured.p50_ms, 3),
        "p99_ms": round(baseline.measured.p99_ms, 3),
        "per_s": round(baseline.measured.rate, 1),
    }


def markdown(report: dict[str, Any]) -> str:
    setup = report["setup"]
    lines = [
        f"Mixed load: {setup['users']} users, {setup['rate']} steps/s in all, mix "
        f"{setup['mix']}, {report['seconds']} s: {report['calls']} calls "
        f"({report['calls_per_s']}/s), {report['failures']} failed.",
        "",
        "| operation | calls | calls/s | p50 ms | p95 ms | p99 ms | p50 ÷ baseline | failed |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for op in report["operations"]:
        name = op["operation"] + (" (deliberate conflict)" if op["kind"] == "conflict" else "")
        ratio = "–" if op["p50_x_baseline"] is None else f"{op['p50_x_baseline']}×"
        lines.append(
            f"| {name} | {op['calls']} | {op['per_s']} | {op['p50_ms']:.0f} | "
            f"{op['p95_ms']:.0f} | {op['p99_ms']:.0f} | {ratio} | {op['failures']} |"
        )
    lines += baselines_markdown(report)
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


def baselines_markdown(report: dict[str, Any]) -> list[str]:
    setup, base = report["setup"], report["baseline"]
    seconds = f"{setup['baseline_seconds']:g} s"
    lines = [
        "",
        f"Baselines, measured against the same deployment once the mix was over ({seconds} one "
        f"call at a time for p50/p99, {seconds} with {setup['users']} in flight for calls/s):",
        "",
        "| baseline | p50 ms | p99 ms | calls/s |",
        "| --- | ---: | ---: | ---: |",
    ]
    for row in report["baselines"]:
        if "not_measured" in row:
            lines.append(f"| {row['baseline']} | not measured: {row['not_measured']} | | |")
        else:
            lines.append(
                f"| {row['baseline']} | {row['p50_ms']:.2f} | {row['p99_ms']:.2f} | "
                f"{row['per_s']:,.0f} |"
            )
    lines.append("")
    lines.append(
        f"p50 ÷ baseline: an operation's p50 over that of the {base['is']}, "
        f"{base['p50_ms']:.2f} ms."
        if base
        else "p50 ÷ baseline: not given, the empty call to graph_service was not measured."
    )
    return lines

"""Part 0: each HTTP client alone (CPU per POST), beside the Go load generator."""

from __future__ import annotations

from pathlib import Path

from bench import harness
from bench.harness import Sink, run_loadgen
from bench.report import Report, Sizes, child, median_child, say

CLIENTS = (
    ("curl-loop", "pycurl's multi interface in a plain loop, no asyncio (libcurl's floor)"),
    ("curl", "ours, the default: libcurl's multi interface on the asyncio loop (CurlPoster)"),
    ("pyreqwest", "pyreqwest (Rust reqwest), its async client on asyncio's loop"),
    ("aiohttp", "aiohttp (AiohttpPoster, our own session)"),
    ("httpx", "httpx.AsyncClient (HttpxPoster)"),
)


def part_clients(report: Report, sizes: Sizes, tools: dict[str, Path], scratch: Path) -> None:
    """Each HTTP client alone, the same prebuilt bodies, the same sink, concurrency 16."""
    import importlib.util

    ws, _ = harness.workspace(sizes.delivery, log=say)
    events_file = scratch / "client-events.jsonl"
    child("dry_run_to_file", ws=str(ws), output=str(events_file))
    concurrency = 16
    say(
        f"0. HTTP clients alone: {sizes.client_requests:,} POSTs, concurrency {concurrency}, "
        f"sink at 5 ms, median of {sizes.repeats}"
    )
    part = "0 (clients)"
    per_request: dict[str, float] = {}
    with Sink(tools["sink"], 5) as sink:
        result = run_loadgen(
            tools["loadgen"], sink.url, events_file, concurrency, sizes.client_requests
        )
        report.measured(
            part,
            f"Go load generator (prebuilt bodies), concurrency {concurrency}",
            result["ok"],
            result["seconds"],
            result["cpu_s"],
            load=f"{result['load_before']} -> {result['load_after']}",
            note="CPU: the whole process, startup included",
        )
        per_request["go"] = 1e6 * result["cpu_s"] / max(1, result["ok"])
        for client, what in CLIENTS:
            if client == "pyreqwest" and importlib.util.find_spec("pyreqwest") is None:
                report.notes.append(
                    "part 0: pyreqwest is not installed here (pip install pyreqwest to compare it)"
                )
                continue
            requests = sizes.client_requests if client != "httpx" else sizes.client_requests // 4
            sink.reset()
            done = median_child(
                sizes.repeats if client != "httpx" else 1,
                "bare_posts",
                client=client,
                url=sink.url,
                events=str(events_file),
                requests=requests,
                concurrency=concurrency,
            )
            r = done.result
            note = f"failed {r['failed']}" if r["failed"] else ""
            report.measured_child(
                part,
                what,
                done,
                note,
            )
            per_request[client] = 1e6 * r["cpu_s"] / max(1, r["events"])
    ranked = sorted(
        (c for c in per_request if c not in ("go", "curl-loop")), key=per_request.__getitem__
    )
    report.target(
        "0",
        "the default HTTP client is the cheapest measured (CPU per POST)",
        f"curl: {per_request.get('curl', 0):,.0f} µs",
        f"{ranked[0]}: {per_request[ranked[0]]:,.0f} µs" if ranked else "",
        None,
        ", ".join(f"{c} {per_request[c]:,.0f} µs" for c in per_request),
        "default = cheapest",
        bool(ranked) and ranked[0] == "curl",
        "" if ranked and ranked[0] == "curl" else f"{ranked[0]} is cheaper",
    )

"""Bench: the .so through Python (request built, answer parsed) against a
plain-Python pass (json + hashlib, hashing each tool), at 10 to 10,000 tools.

    make bench-python    (prints a Markdown table)
"""

from __future__ import annotations

import hashlib
import itertools
import json
import statistics
import time
from typing import Any, Callable, Dict, List

import crawlcheck


def tools(n: int) -> List[Dict[str, Any]]:
    return [
        {
            "name": f"tool_{i}",
            "description": f"Tool number {i}: reads the item and answers with its fields, in order.",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}}, "required": ["id"]},
            "annotations": {"readOnlyHint": i % 2 == 0},
        }
        for i in range(n)
    ]


def timed(fn: Callable[[], Any], budget: float = 1.0) -> float:
    """Median seconds of one run, over as many runs as fit the budget (≥ 5)."""
    runs: List[float] = []
    start = time.perf_counter()
    while len(runs) < 5 or time.perf_counter() - start < budget:
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
        if len(runs) >= 200:
            break
    return statistics.median(runs)


def main() -> None:
    print("| tools | .so via Python: hash_tools (ms) | .so via Python: continuity_check (ms) | plain Python json+hashlib (ms) |")
    print("|---:|---:|---:|---:|")
    for n in (10, 100, 1000, 10000):
        ts = tools(n)
        page = json.dumps({"tools": ts}, separators=(",", ":")).encode()
        lock = crawlcheck.make_lock(tools=ts, server={"url": "https://mcp.example.com/mcp"}, approved_at="2026-11-29T12:00:00Z")["lock"].encode()

        # The core keeps the last few pages it read, by their bytes (the walk
        # memo): each call gets the page followed by other whitespace, one of
        # more than the core's window of sightings remembers (16), so that
        # every call reads it and keeps nothing.
        unseen = itertools.cycle([page + b" " * i for i in range(17)])

        def so_hash() -> None:
            crawlcheck.hash_tools(pages=[next(unseen)])

        def so_check() -> None:
            crawlcheck.continuity_check(
                now="2026-11-30T12:00:00Z",
                lock=lock,
                observed={"endpoint": "https://mcp.example.com/mcp", "pages": [next(unseen)]},
            )

        def plain() -> None:
            doc = json.loads(page)
            for t in doc["tools"]:
                hashlib.sha256(json.dumps(t, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()

        print(f"| {n:,} | {timed(so_hash) * 1e3:.3f} | {timed(so_check) * 1e3:.3f} | {timed(plain) * 1e3:.3f} |")


if __name__ == "__main__":
    main()

"""Bench: a warm Python process's session with with_preflight against the
plain mcp ClientSession (issue 23's Python row), the scenario server
(hosttest/mcpserver) serving n tools over stdio and streamable HTTP.

One session is: open the transport, ``initialize``, ``list_tools``, close.
With the preflight, ``initialize`` also lists every page and runs the core's
continuity_check, and ``list_tools`` answers the handed-off tools. The two
are interleaved in one warm process (a few sessions of each first, untimed)
and each pair is timed both in wall time and in this process's CPU time
(``resource.getrusage``: the server's CPU is the same for both and not
counted), medians. The machine this runs on is shared: read the CPU column
first, and the load average printed beside it.

    build/py-mcp2/bin/python bindings/python/bench_session.py [--tools 1000] [--pairs 15] [--json]
    ... --stdio-server "CMD ARGS" --lock FILE --tools N   (another server, e.g. server-everything)
    ... --profile stdio|http   (cProfile of the preflight's sessions, top 40 by own time)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import crawlcheck
from crawlcheck.preflight import endpoint_of, with_preflight

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("BUILD", REPO / "build"))
MCPSERVER = os.environ.get("CRAWLCHECK_MCPSERVER", str(BUILD / "mcpserver"))
NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=timezone.utc)


def tools_of(n: int) -> List[Dict[str, Any]]:
    """The JS bench's tools (bindings/js/bench/bench.js), so the rows compare."""
    return [
        {
            "name": f"tool_{i:05d}",
            "description": f"Reads record {i} of the shop's catalogue and returns it with its price, stock and supplier.",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string", "maxLength": 64}, "fields": {"type": "array", "items": {"type": "string"}}}, "required": ["id"]},
            "annotations": {"readOnlyHint": True},
        }
        for i in range(n)
    ]


def streamable_client(url: str) -> Any:
    from mcp.client import streamable_http as sh

    fn = getattr(sh, "streamable_http_client", None) or getattr(sh, "streamablehttp_client")
    return fn(url)


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Bench:
    def __init__(self, n: int, tmp: Path, server: Optional[List[str]] = None, lock: Optional[Path] = None) -> None:
        """The scenario server serving n tools over stdio and HTTP, or, with
        server and lock, that stdio server (n tools, pinned by lock)."""
        self.n = n
        self.http: Optional[subprocess.Popen[bytes]] = None
        self.url = ""
        self.locks: Dict[str, Path] = {}
        if server is not None and lock is not None:
            self.params = StdioServerParameters(command=server[0], args=server[1:])
            self.locks["stdio"] = lock
            return
        self.tools = tools_of(n)
        scen = tmp / "scenario.json"
        scen.write_text(json.dumps({"server": {"name": "shop", "version": "2.1"}, "tools": self.tools}, separators=(",", ":")))
        self.params = StdioServerParameters(command=MCPSERVER, args=["--scenario", str(scen)])
        self.http = subprocess.Popen([MCPSERVER, "--scenario", str(scen), "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.http.stdout is not None
        self.url = self.http.stdout.readline().decode().strip()
        if not self.url.startswith("http"):
            raise RuntimeError(f"mcpserver did not print its URL: {self.url!r}")
        for transport, ep in (("stdio", endpoint_of(self.params)), ("http", self.url)):
            made = crawlcheck.make_lock(tools=self.tools, server={"url": ep}, approved_at="2026-11-29T12:00:00.000Z")["lock"]
            p = tmp / f"{transport}.lock.json"
            p.write_text(made)
            self.locks[transport] = p

    def close(self) -> None:
        if self.http is not None:
            self.http.terminate()
            self.http.wait(5)

    def streams(self, transport: str) -> Any:
        return stdio_client(self.params) if transport == "stdio" else streamable_client(self.url)

    async def plain(self, transport: str) -> None:
        async with self.streams(transport) as s:
            async with ClientSession(s[0], s[1]) as session:
                await session.initialize()
                got = await session.list_tools()
        assert len(got.tools) == self.n, len(got.tools)

    async def preflight(self, transport: str) -> None:
        ep: Any = self.params if transport == "stdio" else self.url
        async with self.streams(transport) as s:
            async with with_preflight(ClientSession(s[0], s[1]), self.locks[transport], endpoint=ep, now=lambda: NOW) as session:
                await session.initialize()
                got = await session.list_tools()
                assert session.record is not None and session.record["effect"] == "proceed", session.record
        assert len(got.tools) == self.n, len(got.tools)


async def measure(fn: Callable[[], Awaitable[None]]) -> Tuple[float, float]:
    c, t = cpu(), time.perf_counter()
    await fn()
    return time.perf_counter() - t, cpu() - c


async def run(b: Bench, transport: str, pairs: int, warmup: int) -> Dict[str, Any]:
    for _ in range(warmup):
        await b.plain(transport)
        await b.preflight(transport)
    plain: List[Tuple[float, float]] = []
    pre: List[Tuple[float, float]] = []
    for i in range(pairs):
        # Alternate which goes first, so neither always follows the other's garbage.
        if i % 2:
            pre.append(await measure(lambda: b.preflight(transport)))
            plain.append(await measure(lambda: b.plain(transport)))
        else:
            plain.append(await measure(lambda: b.plain(transport)))
            pre.append(await measure(lambda: b.preflight(transport)))
    med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
    return {
        "transport": transport,
        "tools": b.n,
        "pairs": pairs,
        "plain_wall": med(plain, 0),
        "preflight_wall": med(pre, 0),
        "plain_cpu": med(plain, 1),
        "preflight_cpu": med(pre, 1),
        # The ratio of the medians of each pair's ratio: a pair shares the machine's moment.
        "ratio_wall": statistics.median(p[0] / q[0] for p, q in zip(pre, plain)),
        "ratio_cpu": statistics.median(p[1] / q[1] for p, q in zip(pre, plain) if q[1] > 0),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", type=int, default=1000)
    ap.add_argument("--pairs", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--transports", default="stdio,http")
    ap.add_argument("--stdio-server", help='another stdio server instead of the scenario server, "CMD ARGS" (with --lock and --tools, its tool count)')
    ap.add_argument("--lock", type=Path, help="the lockfile pinning --stdio-server")
    ap.add_argument("--json", action="store_true", help="one JSON object a line instead of the table")
    ap.add_argument("--profile", choices=["stdio", "http"], help="cProfile the preflight's sessions instead")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="crawlcheck-bench-") as d:
        server = shlex.split(a.stdio_server) if a.stdio_server else None
        if server is not None:
            if a.lock is None:
                ap.error("--stdio-server needs --lock")
            a.transports = "stdio"
        b = Bench(a.tools, Path(d), server, a.lock)
        try:
            if a.profile:
                import cProfile
                import pstats

                async def many() -> None:
                    for _ in range(a.warmup):
                        await b.preflight(a.profile)
                    prof = cProfile.Profile()
                    prof.enable()
                    for _ in range(a.pairs):
                        await b.preflight(a.profile)
                    prof.disable()
                    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(40)

                anyio.run(many)
                return
            rows = [anyio.run(run, b, t, a.pairs, a.warmup) for t in a.transports.split(",")]
        finally:
            b.close()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if a.json:
        for r in rows:
            print(json.dumps({**r, "load": load}))
        return
    print(f"Python {sys.version.split()[0]}, mcp {_mcp_version()}, {a.tools:,} tools, medians of {a.pairs} interleaved pairs; load average {load}.")
    print()
    print("| transport | plain ClientSession | with_preflight | ratio (wall) | plain CPU | preflight CPU | ratio (CPU) | target ≤ 1.25× |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        met = "met" if r["ratio_cpu"] <= 1.25 else "**missed**"
        print(
            f"| {r['transport']} | {r['plain_wall'] * 1e3:.0f} ms | {r['preflight_wall'] * 1e3:.0f} ms | {r['ratio_wall']:.2f}× "
            f"| {r['plain_cpu'] * 1e3:.0f} ms | {r['preflight_cpu'] * 1e3:.0f} ms | {r['ratio_cpu']:.2f}× | {met} (CPU) |"
        )


def _mcp_version() -> str:
    from importlib.metadata import version

    return version("mcp")


if __name__ == "__main__":
    main()

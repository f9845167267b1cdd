"""Servers nobody here wrote, for the reference-server tests: a FastMCP
server of the installed ``mcp`` package (fastmcp_server.py) over streamable
HTTP, and the crawlcheck CLI run against them (lock, check)."""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, List

import pytest

from servers import CLI, REPO, _start, _stop

FASTMCP = Path(__file__).with_name("fastmcp_server.py")
# The TypeScript reference server, as bindings/js pins and installs it (npm
# ci there), with the preload that binds it to 127.0.0.1 on a free port.
JS = REPO / "bindings" / "js"
EVERYTHING = JS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
LISTEN_LOCAL = JS / "test" / "interop" / "listen-local.mjs"


@contextmanager
def fastmcp(*flags: str) -> Iterator[str]:
    """A FastMCP server (flags: --stateless, --json); yields its MCP URL."""
    p, url = _start([sys.executable, str(FASTMCP), *flags])
    try:
        yield url
    finally:
        _stop(p)


@contextmanager
def everything(transport: str) -> Iterator[str]:
    """server-everything over transport (sse, streamableHttp); yields its
    address (no path). It prints the address on stderr, as
    bindings/js/test/servers.js reads it."""
    if not EVERYTHING.exists():
        pytest.skip(f"{EVERYTHING} is not installed: npm ci in bindings/js")
    p = subprocess.Popen(["node", "--import", str(LISTEN_LOCAL), str(EVERYTHING), transport], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert p.stderr is not None
        for raw in p.stderr:
            line = raw.decode().strip()
            if line.startswith("crawlcheck-listening "):
                base = line.split(" ", 1)[1]
                break
        else:
            raise RuntimeError(f"server-everything {transport} exited ({p.wait()}) before listening")
        yield base
    finally:
        _stop(p)


def cli(*args: str) -> str:
    """The crawlcheck CLI's stdout; exit 1 (a check that withholds) still answers."""
    r = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"crawlcheck {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r.stdout


def cli_lock(tmp: Path, source: List[str]) -> Path:
    """The lockfile `crawlcheck lock` makes against the live server."""
    out = tmp / "crawlcheck.lock.json"
    cli("lock", "--features=false", *source, "--capabilities", "none", "--now", "2026-11-01T00:00:00Z", "-o", str(out))
    return out

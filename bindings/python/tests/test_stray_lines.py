"""A stdio server that prints lines that are no JSON-RPC message before its
answers (@azure/mcp 2.0.5 prints "No X display available…"):
crawlcheck.transport's stdio_client skips them, as mcp's own stdio_client
does, the preflight reads the list whole, the record counts the lines, and it
is the record the Go preflight (crawlcheck check) writes, byte for byte."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import List

import pytest
from mcp import ClientSession, StdioServerParameters
from servers import CLI, MCPSERVER, NOW, NOW_S, pin, scenario

from crawlcheck.preflight import endpoint_of, with_preflight
from crawlcheck.transport import starts_message, stdio_client

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_starts_message() -> None:
    for line in (b'{"jsonrpc":"2.0"}', b"{", b"[{}]", b"[ ]", b'{"a":'):
        assert starts_message(line), line
    for line in (b"No X display available", b"[info] starting", b"[", b'"x"', b"42"):
        assert not starts_message(line), line


async def test_stray_lines_are_skipped_counted_and_recorded_alike(tmp_path: Path) -> None:
    scen = scenario(tmp_path, handshake="initialize")
    banner = tmp_path / "banner.sh"
    banner.write_text("#!/bin/sh\nprintf 'No X display available, browser login disabled\\n\\n[info] starting\\n'\nexec \"$@\"\n")
    banner.chmod(0o755)
    params = StdioServerParameters(command=str(banner), args=[MCPSERVER, "--scenario", str(scen)])
    lock = pin(tmp_path, endpoint_of(params))
    py: List[bytes] = []
    async with stdio_client(params) as (read, write):
        async with with_preflight(ClientSession(read, write), lock, endpoint=params, now=lambda: NOW, on_record=lambda _, raw: py.append(raw)) as s:
            await s.initialize()
            listed = sorted(t.name for t in (await s.list_tools()).tools)
    assert listed == ["get_item", "list_items"]
    rec = json.loads(py[0])
    assert rec["observed"]["stray_lines"] == 2 and rec["effect"] == "proceed", rec
    out = subprocess.run(
        [CLI, "check", "--lock", str(lock), "--server", shlex.join([params.command, *params.args]), "--now", NOW_S, "--json"],
        capture_output=True,
        timeout=60,
    )
    assert out.stdout.splitlines() == py[:1], out.stderr.decode()

"""Cross-host identity against the red team's server (issue 22, F12): for
every attack hosttest/attacker serves (a repeated key, the answer inside a
JSON-RPC batch, a frame under an unknown id before the answer, an id written
as a string, an array result, an error answer, a 12 MiB and a 20 MiB frame,
exit mid-page, invalid UTF-8, a lone surrogate, NaN and 1e400 in a page, a
serverInfo no strict parser takes, never-ending pages, a rug pull, a storm),
the check with_preflight makes on crawlcheck.transport's stdio transport
leaves the records `crawlcheck check` (the Go preflight) leaves, byte for
byte, at the same clock. bindings/js/test/hostile-identity.test.js holds
both JS SDK majors to the same records and bindings/go/preflight's
TestHostileIdentity the Go preflight's Session, so the five hosts agree."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import List

import anyio
import pytest
from servers import CLI, NOW, NOW_S, pin
from test_attack import APPROVED, ATTACKER, ATTACKS

from crawlcheck.preflight import ContinuityRefused, endpoint_of, with_preflight
from crawlcheck.transport import stdio_client

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("attack", ATTACKS)
async def test_the_first_checks_records_equal_crawlcheck_checks(attack: str, tmp_path: Path) -> None:
    params = StdioServerParameters(command=ATTACKER, args=["--attack", attack])
    lock = pin(tmp_path, endpoint_of(params), tools=APPROVED)
    py: List[bytes] = []
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write):
            async with with_preflight(ClientSession(read, write), lock, endpoint=params, now=lambda: NOW, timeout=10.0, on_record=lambda _, raw: py.append(raw)) as s:
                try:
                    await s.initialize()
                except ContinuityRefused:
                    pass
                first = list(py)
    out = subprocess.run([CLI, "check", "--lock", str(lock), "--server", shlex.join([ATTACKER, "--attack", attack]), "--now", NOW_S, "--json"], capture_output=True, timeout=120)
    go = out.stdout.splitlines()
    assert go, out.stderr.decode()
    assert first == go, "\n".join(r[:600].decode("utf-8", "replace") for r in first + go)

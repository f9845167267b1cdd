"""Cross-host identity against the red team's server (issue 22, F12): for
every attack hosttest/attacker serves (a repeated key, the answer inside a
JSON-RPC batch, a frame under an unknown id before the answer, an id written
as a string, an array result, an error answer, a 12 MiB and a 20 MiB frame,
exit mid-page, invalid UTF-8, a lone surrogate, NaN and 1e400 in a page, a
serverInfo no strict parser takes, never-ending pages, a rug pull, a storm),
the check with_preflight makes on crawlcheck.transport's stdio transport
leaves the records `crawlcheck check` (the Go preflight) leaves, byte for
byte, at the same clock; the attacks written over streamable HTTP
(HTTP_ATTACKS: a decoy answer in an event of type "other" before the real
one) the same on crawlcheck.transport's streamable HTTP transport against
`crawlcheck check --url`. bindings/js/test/hostile-identity.test.js holds
both JS SDK majors to the same records and bindings/go/preflight's
TestHostileIdentity the Go preflight's Session, so the five hosts agree.

And the server's instructions a framework reads (McpPreflight.instructions,
initialize_result, what initialize() returns) are the core's handoff byte for
byte, never the SDK's parse of the initialize answer: an attack whose lock
pins a handshake (attacker --handshake) hides evil instructions beside the
approved ones (attacker --instructions says what may be exposed)."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any, Iterator, List, Optional

import anyio
import pytest
from servers import CLI, NOW, NOW_S, pin
from test_attack import APPROVED, ATTACKER, ATTACKS

import crawlcheck
from crawlcheck.preflight import ContinuityRefused, endpoint_of, with_preflight
from crawlcheck.transport import stdio_client, streamable_http_client

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402

pytestmark = pytest.mark.anyio

#: The attacks whose bite is in the streamable HTTP framing: each is served
#: by `attacker --http` too.
HTTP_ATTACKS = ["sse_other_event"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def says(flag: str, attack: str) -> Any:
    """What `attacker FLAG attack` prints, read as JSON (None for null)."""
    return json.loads(subprocess.run([ATTACKER, flag, attack], capture_output=True, check=True).stdout)


def pin_handshake(tmp: Path, endpoint: str, handshake: Any) -> Path:
    """A lockfile approving APPROVED and the attack's pinned handshake, as make_lock pins what a host saw."""
    pages = [json.dumps({"tools": APPROVED})]
    observed = {"endpoint": endpoint, "handshake_result": json.dumps(handshake), "pages": pages}
    p = tmp / "crawlcheck.lock.json"
    p.write_text(crawlcheck.make_lock(observed=observed, approved_at="2026-11-01T00:00:00Z")["lock"])
    return p


@pytest.mark.parametrize("attack", ATTACKS)
async def test_the_first_checks_records_equal_crawlcheck_checks(attack: str, tmp_path: Path) -> None:
    params = StdioServerParameters(command=ATTACKER, args=["--attack", attack])
    handshake = says("--handshake", attack)
    lock = pin(tmp_path, endpoint_of(params), tools=APPROVED) if handshake is None else pin_handshake(tmp_path, endpoint_of(params), handshake)
    handed: Optional[str] = says("--instructions", attack)
    py: List[bytes] = []
    exposed: List[Optional[str]] = []
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write):
            async with with_preflight(ClientSession(read, write), lock, endpoint=params, now=lambda: NOW, timeout=10.0, on_record=lambda _, raw: py.append(raw)) as s:
                try:
                    result = await s.initialize()
                    exposed.append(result.instructions)
                except ContinuityRefused:
                    exposed.append(handed)  # no result reached the caller
                exposed.append(s.instructions)
                if s.initialize_result is not None:
                    exposed.append(s.initialize_result.instructions)
                first = list(py)
    out = subprocess.run([CLI, "check", "--lock", str(lock), "--server", shlex.join([ATTACKER, "--attack", attack]), "--now", NOW_S, "--json"], capture_output=True, timeout=120)
    go = out.stdout.splitlines()
    assert go, out.stderr.decode()
    assert first == go, "\n".join(r[:600].decode("utf-8", "replace") for r in first + go)
    assert exposed and all(x == handed for x in exposed), (exposed, handed)


@pytest.fixture
def http_attacker(request: pytest.FixtureRequest) -> Iterator[str]:
    """The attack request.param served over streamable HTTP; its URL."""
    proc = subprocess.Popen([ATTACKER, "--attack", request.param, "--http", "127.0.0.1:0"], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().decode().strip()
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("http_attacker", HTTP_ATTACKS, indirect=True)
async def test_the_first_checks_records_over_http_equal_crawlcheck_checks(http_attacker: str, tmp_path: Path) -> None:
    url = http_attacker
    lock = pin(tmp_path, endpoint_of(url), tools=APPROVED)
    py: List[bytes] = []
    with anyio.fail_after(60):
        async with streamable_http_client(url) as streams:
            async with with_preflight(ClientSession(streams[0], streams[1]), lock, endpoint=url, now=lambda: NOW, timeout=10.0, on_record=lambda _, raw: py.append(raw)) as s:
                try:
                    await s.initialize()
                except ContinuityRefused:
                    pass
                first = list(py)
    out = subprocess.run([CLI, "check", "--lock", str(lock), "--url", url, "--now", NOW_S, "--json"], capture_output=True, timeout=120)
    go = out.stdout.splitlines()
    assert go, out.stderr.decode()
    assert first == go, "\n".join(r[:600].decode("utf-8", "replace") for r in first + go)

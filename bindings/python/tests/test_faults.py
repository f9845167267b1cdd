"""testdata/faults.json run live (docs/testdata.md): each host fault's server
(a port nothing listens on, a command that does not start, one that exits,
one that hangs) gives exactly the golden record through with_preflight on
crawlcheck.transport's transports: the same bytes as the Go preflight, the
CLI and the JS SDK, because the record's detail is the core's wording of
the fault, never an exception's text."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, List

import pytest
from vectors import REPO_TESTDATA, compact, elements, members

from crawlcheck.preflight import with_preflight
from crawlcheck.transport import stdio_client, streamable_http_client

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402

pytestmark = pytest.mark.anyio

_TEXT = (REPO_TESTDATA / "faults.json").read_bytes()
_GOLDEN = json.loads(_TEXT)
_RAW_CASES = elements(members(_TEXT)["cases"])
CASES = [(c, compact(members(raw)["record"])) for c, raw in zip(_GOLDEN["cases"], _RAW_CASES) if c["server"] is not None]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("case,want", CASES, ids=[c["name"] for c, _ in CASES])
async def test_fault_gives_the_golden_record(case: Any, want: bytes, tmp_path: Path) -> None:
    lock = tmp_path / "lock.json"
    lock.write_text(json.dumps(case["request"]["lock"]))
    now = datetime.fromisoformat(case["request"]["now"].replace("Z", "+00:00"))
    raws: List[bytes] = []
    server = case["server"]
    if "url" in server:
        transport: Any = streamable_http_client(server["url"])
        endpoint: Any = server["url"]
    else:
        endpoint = StdioServerParameters(command=server["command"][0], args=server["command"][1:])
        transport = stdio_client(endpoint)
    try:
        async with transport as streams:
            async with with_preflight(
                ClientSession(streams[0], streams[1]),
                lock,
                endpoint=endpoint,
                mode=case["request"]["mode"],
                now=lambda: now,
                timeout=case.get("deadline_ms", _GOLDEN["timeout_ms"]) / 1000,
                on_record=lambda _, raw: raws.append(raw),
            ) as s:
                await s.initialize()
    except BaseException:  # noqa: BLE001 - the refusal, or the transport's own failure; the record is what counts
        pass
    assert raws, "no record"
    assert raws[0] == want

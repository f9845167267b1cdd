"""A transport that dies mid-listing still leaves a record (issue 22, F7):
one invalid UTF-8 byte in a tools/list answer kills mcp 1.x's stdio reader,
whose task group then cancels the check; the record is made anyway
(server_unavailable), logged and handed to on_record. On mcp 2.x the reader
stops without closing the session's stream, so the check ends at its
deadline (check_timeout)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from servers import MCPSERVER, pin, stdio_preflight

from crawlcheck.preflight import endpoint_of

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402

pytestmark = pytest.mark.anyio

MAJOR = 1 if hasattr(ClientSession, "add_response_router") else 2


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_invalid_utf8_mid_listing_leaves_a_record(tmp_path: Path) -> None:
    raw = tmp_path / "tools.json"
    raw.write_bytes(b'[{"name":"get_item","description":"bad \xff byte","inputSchema":{"type":"object"}}]')
    params = StdioServerParameters(command=MCPSERVER, args=["--tools-raw", str(raw)])
    lock = pin(tmp_path, endpoint_of(params))
    log = tmp_path / "records.jsonl"
    records: List[Dict[str, Any]] = []
    try:
        async with stdio_preflight(params, lock, log, 1.0, records):
            pass
    except BaseException:  # noqa: BLE001 - the transport's own failure may surface; the record is what counts
        pass
    assert len(records) == 1, records
    rec = records[0]
    assert rec["effect"] == "pause"
    assert rec["observed"]["failure"] == ("server_unavailable" if MAJOR == 1 else "check_timeout")
    assert [json.loads(line)["record_sha256"] for line in log.read_text().splitlines()] == [rec["record_sha256"]]

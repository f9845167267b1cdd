"""A server that announces a change after every listing (issue 22, F8): the
background re-checks are coalesced and rate-limited (RECHECK_MIN, doubling
while the storm lasts), so an idle session makes a handful of records, not
hundreds a second; a call still re-checks at once."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Dict, List

import anyio
import pytest
from servers import MCPSERVER, NOW, pin, scenario

from crawlcheck.preflight import RECHECK_MAX, endpoint_of, with_preflight

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

pytestmark = pytest.mark.anyio

# list_changed after each of the first 2,000 listings; the edit keeps the
# tool's bytes, so every record is "unchanged".
STORM = [
    {"after_lists": i + 1, "notify": True, "ops": [{"op": "edit", "name": "list_items", "set": {"description": "Lists the items."}}]}
    for i in range(2000)
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_list_changed_storm_gives_a_bounded_number_of_records(tmp_path: Path) -> None:
    params = StdioServerParameters(command=MCPSERVER, args=["--scenario", str(scenario(tmp_path, mutations=STORM))])
    lock = pin(tmp_path, endpoint_of(params))
    records: List[Dict[str, Any]] = []
    async with stdio_client(params) as (read, write):
        async with with_preflight(
            ClientSession(read, write), lock, endpoint=params, now=lambda: NOW, timeout=5.0, on_record=lambda r, _: records.append(r)
        ) as s:
            await s.initialize()
            await anyio.sleep(3.5)
            # The first check, then background re-checks at about 0 s, 1 s and 3 s.
            idle = len(records)
            assert 2 <= idle <= 5, f"records after 3.5 s of a storm: {idle}"
            assert all(r["effect"] == "proceed" for r in records)
            # The records say the storm: the first check and the first
            # re-check (run at once, for one notification) are unmarked, each
            # held-back one carries storm with the notifications it covers and
            # how long it was held back.
            first, *rechecks = records
            assert "storm" not in first and "storm" not in rechecks[0]
            marked = [r["storm"] for r in rechecks if "storm" in r]
            assert 1 <= len(marked) == len(rechecks) - 1, f"storm records: {len(marked)} of {len(rechecks)} re-checks"
            for storm in marked:
                assert sorted(storm) == ["coalesced", "held_back_ms"]
                assert storm["coalesced"] >= 1
                assert 0 < storm["held_back_ms"] <= RECHECK_MAX * 1000

            # The server announced a change after the last listing: the call
            # is judged by a check made after it, without waiting out the
            # hold-off (4 s by now).
            before = records[-1]["record_sha256"]
            started = time.monotonic()
            assert (await s.call_tool("list_items")).content[0].text == "called list_items"
            assert s.record is not None and s.record["record_sha256"] != before
            assert time.monotonic() - started < 3


async def test_records_keeps_the_newest_and_the_log_every_one(tmp_path: Path) -> None:
    from crawlcheck.preflight import MAX_KEPT_RECORDS

    params = StdioServerParameters(command=MCPSERVER, args=["--scenario", str(scenario(tmp_path, list_changed=False))])
    lock = pin(tmp_path, endpoint_of(params))
    log = tmp_path / "records.jsonl"
    async with stdio_client(params) as (read, write):
        async with with_preflight(ClientSession(read, write), lock, endpoint=params, now=lambda: NOW, log_path=str(log)) as s:
            await s.initialize()
            for _ in range(MAX_KEPT_RECORDS + 10):
                await s.recheck()
            recs = s.records
            assert len(recs) == MAX_KEPT_RECORDS
            assert s.record is not None and recs[-1]["record_sha256"] == s.record["record_sha256"]
            assert all(b["prev_record_sha256"] == a["record_sha256"] for a, b in zip(recs, recs[1:]))
    lines = log.read_text().splitlines()
    assert len(lines) == MAX_KEPT_RECORDS + 11

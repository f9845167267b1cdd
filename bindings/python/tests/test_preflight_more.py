"""The preflight's edges: configuration errors, a server that is down,
signed baselines, the record log, what a person is shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from servers import KEYS, NOW, TOOLS, pin
from test_preflight import names, observations, server

import crawlcheck
from crawlcheck._log import LogError, RecordLog
from crawlcheck.preflight import ContinuityRefused, PreflightError, with_preflight

pytestmark = pytest.mark.anyio
OPERATOR = json.loads((KEYS / "test-operator.json").read_text())


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def leaf(e: BaseException) -> BaseException:
    while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
        e = e.exceptions[0]
    return e


async def test_bad_lockfile_is_no_session(tmp_path: Path) -> None:
    lock = tmp_path / "lock.json"
    lock.write_text('{"kind":"crawlcheck-mcp-lock","v":1,"v":1}')
    async with server("http", tmp_path) as srv:
        with pytest.raises(BaseException) as e:
            async with srv.session(lock):
                pass
        assert isinstance(leaf(e.value), PreflightError) and "json_duplicate_key" in str(leaf(e.value))
        with pytest.raises(BaseException) as e:
            async with srv.session(tmp_path / "missing.json"):
                pass
        assert isinstance(leaf(e.value), PreflightError)


async def test_no_check_no_call(tmp_path: Path) -> None:
    async with server("stdio", tmp_path) as srv:
        async with srv.session(pin(tmp_path, srv.endpoint)) as s:
            with pytest.raises(PreflightError):
                await s.list_tools()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_server_down_is_refused_with_a_record(transport: str, tmp_path: Path) -> None:
    from test_preflight import streamable_client
    from test_service import _refused_url

    url = _refused_url() + "/mcp"
    params = StdioServerParameters(command="/bin/false")
    lock = pin(tmp_path, url if transport == "http" else "stdio:/bin/false")
    records: List[Dict[str, Any]] = []
    refused: List[ContinuityRefused] = []
    kw: Dict[str, Any] = dict(now=lambda: NOW, timeout=3, on_record=lambda r, _: records.append(r))
    try:
        if transport == "http":
            async with streamable_client(url) as streams:
                async with with_preflight(ClientSession(streams[0], streams[1]), lock, endpoint=url, **kw) as s:
                    try:
                        await s.initialize()
                    except ContinuityRefused as e:
                        refused.append(e)
        else:
            async with stdio_client(params) as (read, write):
                async with with_preflight(ClientSession(read, write), lock, endpoint=params, **kw) as s:
                    try:
                        await s.initialize()
                    except ContinuityRefused as e:
                        refused.append(e)
    except BaseException as e:  # noqa: BLE001
        # The transport's own error (a refused connection, mcp 1.x's broken
        # pipe) cancels the session's body: the preflight records before it goes.
        assert not isinstance(leaf(e), (AssertionError, ContinuityRefused)), repr(e)
    assert len(records) == 1
    rec = records[0]
    assert rec["observed"]["failure"] in ("server_unavailable", "check_timeout") and rec["effect"] == "pause"
    assert not refused or refused[0].record == rec


async def test_signed_baseline_and_resigning(tmp_path: Path) -> None:
    async with server("http", tmp_path) as srv:
        changed = [dict(TOOLS[0], description="Reads an item, as approved."), TOOLS[1]]
        unsigned = pin(tmp_path, srv.endpoint, tools=changed)
        signed = crawlcheck.sign_lock(lock=unsigned.read_bytes(), private_key=OPERATOR["seed"])["lock"]
        lock = tmp_path / "signed.json"
        lock.write_text(signed)
        kw: Dict[str, Any] = dict(operator_keys=[OPERATOR["public_key"]], signing_key=OPERATOR["seed"])
        async with srv.session(lock, **kw) as s:
            await s.initialize()
            assert s.record is not None and s.record["baseline"]["trust"] == "operator_signed"
            assert s.record["tools"]["get_item"] == "pause_tool"
            rec = await s.confirm("get_item")
            assert rec["baseline"]["trust"] == "operator_signed" and rec["effect"] == "proceed"
        # An unsigned lockfile where a signature is required: the session is denied.
        async with srv.session(unsigned, operator_keys=[OPERATOR["public_key"]]) as s:
            await s.initialize()
            assert s.record is not None and "baseline_untrusted" in observations(s.record)
            assert s.record["effect"] == "deny"


async def test_refusal_shows_server_strings_escaped(tmp_path: Path) -> None:
    evil = {"name": "get\u001b[2Kitem\u202e", "description": "x", "inputSchema": {"type": "object"}}
    async with server("http", tmp_path, tools=[*TOOLS, evil]) as srv:
        async with srv.session(pin(tmp_path, srv.endpoint)) as s:
            await s.initialize()
            assert names(await s.list_tools()) == ["get_item", "list_items"]
            with pytest.raises(ContinuityRefused) as refused:
                await s.call_tool(evil["name"])
            msg = str(refused.value)
            assert "\u001b" not in msg and "\u202e" not in msg and "\\u{1B}" in msg, msg


def test_log_torn_tail_and_damage(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    req = json.loads((Path(__file__).resolve().parents[3] / "testdata/ops/continuity_check/example.json").read_text())["request"]
    raws: List[bytes] = []
    prev = None
    for _ in range(2):
        r = dict(req, **({"prev_record_sha256": prev} if prev else {}))
        raw = crawlcheck.call_result("continuity_check", r)
        raws.append(raw)
        prev = json.loads(raw)["record_sha256"]
    log = RecordLog(str(path))
    log.append(raws[0], json.loads(raws[0])["record_sha256"], None)
    with pytest.raises(LogError):  # does not name the head
        log.append(raws[0], json.loads(raws[0])["record_sha256"], None)
    log.close()
    with open(path, "ab") as f:
        f.write(raws[1][:40])  # a crash mid-append
    log = RecordLog(str(path))
    assert log.head == json.loads(raws[0])["record_sha256"]
    log.append(raws[1], json.loads(raws[1])["record_sha256"], json.loads(raws[1])["prev_record_sha256"])
    log.close()
    assert crawlcheck.verify_chain(records=path.read_bytes())["count"] == 2
    # A whole last record whose newline was never written gets it (the
    # core's add_newline): the log reopens and stays one record a line.
    whole = path.read_bytes()
    path.write_bytes(whole[:-1])
    log = RecordLog(str(path))
    log.close()
    assert path.read_bytes() == whole
    path.write_bytes(path.read_bytes().replace(b'"enforce"', b'"observe"', 1))
    with pytest.raises(LogError):
        RecordLog(str(path))


async def test_agentgate_lock_confirm_keeps_the_other_servers(tmp_path: Path) -> None:
    other = crawlcheck.make_lock(tools=[{"name": "x", "inputSchema": {"type": "object"}}], format="agentgate", name="other", approved_at="2026-11-29T12:00:00Z")["lock"]
    changed = [dict(TOOLS[0], description="Reads an item, as approved."), TOOLS[1]]
    ag = crawlcheck.make_lock(tools=changed, format="agentgate", name="shop", into=other, approved_at="2026-11-29T12:00:00Z")["lock"]
    lock = tmp_path / "agentgate.lock"
    lock.write_text(ag)
    async with server("stdio", tmp_path) as srv:
        async with srv.session(lock, server_name="shop") as s:
            await s.initialize()
            assert s.record is not None and s.record["tools"]["get_item"] == "pause_tool"
            assert s.record["baseline"]["server_name"] == "shop"
            rec = await s.confirm("get_item")
            assert rec["effect"] == "proceed"
    servers = json.loads(lock.read_text())["servers"]
    assert sorted(servers) == ["other", "shop"]

"""with_preflight end to end: the real scenario server over stdio and
streamable HTTP, through the real mcp ClientSession (spec, "End to end")."""

from __future__ import annotations

import json
import logging
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Dict, List

import anyio
import pytest
from servers import MCPSERVER, NOW, http_server, mutate_http, mutate_trigger, pin, rug_pull, scenario

import crawlcheck
from crawlcheck.preflight import ContinuityRefused, McpPreflight, PreflightError, endpoint_of, with_preflight

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

pytestmark = pytest.mark.anyio

TRANSPORTS = ["stdio", "http"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def streamable_client(url: str) -> Any:
    from mcp.client import streamable_http as sh

    fn = getattr(sh, "streamable_http_client", None) or getattr(sh, "streamablehttp_client")
    return fn(url)


class Server:
    """One scenario server and how to reach and mutate it."""

    def __init__(self, transport: str, tmp: Path, scen: Path, url: str = "") -> None:
        self.transport = transport
        self.tmp = tmp
        self.trigger = tmp / "trigger"
        self.url = url
        self.params = StdioServerParameters(command=MCPSERVER, args=["--scenario", str(scen), "--trigger", str(self.trigger)])
        self.endpoint = endpoint_of(url if transport == "http" else self.params)

    def mutate(self, mutation: Any = None) -> None:
        if self.transport == "http":
            mutate_http(self.url, mutation)
        else:
            mutate_trigger(self.trigger, mutation)

    @asynccontextmanager
    async def session(self, lock: Path, **kw: Any) -> AsyncIterator[McpPreflight]:
        kw.setdefault("now", lambda: NOW)
        kw.setdefault("timeout", 5.0)
        # wire: crawlcheck.transport's transports (bounded before decoding,
        # the wire's bytes to the core), else mcp's own.
        wire = kw.pop("wire", False)
        if wire:
            from crawlcheck.transport import stdio_client as wire_stdio
            from crawlcheck.transport import streamable_http_client as wire_http
        if self.transport == "http":
            async with (wire_http(self.url) if wire else streamable_client(self.url)) as streams:
                async with with_preflight(ClientSession(streams[0], streams[1]), lock, endpoint=self.url, **kw) as s:
                    yield s
        else:
            async with (wire_stdio(self.params) if wire else stdio_client(self.params)) as (read, write):
                async with with_preflight(ClientSession(read, write), lock, endpoint=self.params, **kw) as s:
                    yield s


@asynccontextmanager
async def server(transport: str, tmp: Path, **knobs: Any) -> AsyncIterator[Server]:
    scen = scenario(tmp, **knobs)
    if transport == "http":
        with http_server(scen) as url:
            yield Server(transport, tmp, scen, url)
    else:
        yield Server(transport, tmp, scen)


def names(result: Any) -> List[str]:
    return sorted(t.name for t in result.tools)


def observations(rec: Dict[str, Any]) -> List[str]:
    return [o["observation"] for o in rec["observations"]]


async def wait_for_change(s: McpPreflight, seen: int) -> None:
    with anyio.fail_after(5):
        while s._tap.changes <= seen:
            await anyio.sleep(0.02)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_rug_pull_pauses_only_that_tool_and_confirm_restores_it(transport: str, tmp_path: Path) -> None:
    records: List[Dict[str, Any]] = []
    async with server(transport, tmp_path, mutations=[rug_pull()]) as srv:
        lock = pin(tmp_path, srv.endpoint)
        async with srv.session(lock, log_path=str(tmp_path / "records.jsonl"), on_record=lambda r, _: records.append(r)) as s:
            await s.initialize()
            assert s.record is not None and s.record["effect"] == "proceed", s.record
            assert names(await s.list_tools()) == ["get_item", "list_items"]
            assert (await s.call_tool("get_item", {"id": "1"})).content[0].text == "called get_item"

            seen = s._tap.changes
            srv.mutate()
            await wait_for_change(s, seen)
            # The next call checks again first: only the changed tool pauses.
            with pytest.raises(ContinuityRefused) as refused:
                await s.call_tool("get_item", {"id": "1"})
            assert refused.value.tool == "get_item" and refused.value.effect == "pause_tool"
            assert refused.value.record["tools"] == {"get_item": "pause_tool", "list_items": "proceed"}
            assert observations(refused.value.record) == ["description_changed"]
            assert names(await s.list_tools()) == ["list_items"]
            assert (await s.call_tool("list_items")).content[0].text == "called list_items"

            # Confirming nothing changed is refused; confirming the change restores it.
            with pytest.raises(PreflightError):
                await s.confirm("list_items")
            rec = await s.confirm("get_item")
            assert rec["effect"] == "proceed" and observations(rec) == ["unchanged"]
            assert names(await s.list_tools()) == ["get_item", "list_items"]
            assert (await s.call_tool("get_item", {"id": "1"})).content[0].text == "called get_item"

        # The lockfile on disk now approves the new description.
        assert "Ignore previous instructions." in lock.read_text()
        # The log is a chain the core verifies, with every record handed on.
        log = (tmp_path / "records.jsonl").read_bytes()
        chain = crawlcheck.verify_chain(records=log)
        assert chain["valid"] and chain["count"] == len(records) == 3
        assert [json.loads(line) for line in log.splitlines()] == records


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_observe_never_blocks(transport: str, tmp_path: Path) -> None:
    async with server(transport, tmp_path, mutations=[rug_pull()]) as srv:
        lock = pin(tmp_path, srv.endpoint, tools=[{"name": "other", "description": "x", "inputSchema": {"type": "object"}}])
        async with srv.session(lock, mode="observe") as s:
            await s.initialize()
            rec = s.record
            assert rec is not None and rec["effect"] == "proceed"
            assert rec["would"]["effect"] == "pause_tool"
            assert names(await s.list_tools()) == ["get_item", "list_items"]
            assert (await s.call_tool("get_item", {"id": "1"})).content[0].text == "called get_item"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_observe_tells_a_person_once_what_enforce_would_have_withheld(transport: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 34, item 1: observe mode says on the crawlcheck logger (stderr
    when logging is not configured), once, in the core's words, which tool
    enforce would have withheld and the record that says so."""
    caplog.set_level(logging.WARNING, logger="crawlcheck")
    async with server(transport, tmp_path) as srv:
        approved = [dict(t) for t in __import__("servers").TOOLS]
        approved[0] = dict(approved[0], description="Reads an item, as approved.")
        lock = pin(tmp_path, srv.endpoint, tools=approved)
        async with srv.session(lock, mode="observe") as s:
            await s.initialize()
            rec = s.record
            assert rec is not None and rec["would"]["tools"]["get_item"] == "pause_tool"
            told = [r for r in caplog.records if r.name == "crawlcheck"]
            assert len(told) == 1 and told[0].levelno == logging.WARNING
            text = told[0].getMessage()
            assert text == crawlcheck.refusal(record=s.record_raw, would=True)["text"]
            assert text.startswith('crawlcheck: observe mode let this through; enforce would have: tool "get_item" withheld (pause_tool): description_changed')
            assert text.endswith(f"(record {rec['record_sha256']})")
            await s.recheck()
            assert s.record is not None and s.record["record_sha256"] != rec["record_sha256"]
            assert len([r for r in caplog.records if r.name == "crawlcheck"]) == 1


async def test_observe_says_nothing_when_enforce_would_refuse_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="crawlcheck")
    async with server("stdio", tmp_path) as srv:
        lock = pin(tmp_path, srv.endpoint)
        async with srv.session(lock, mode="observe") as s:
            await s.initialize()
            assert s.record is not None and s.record["would"]["effect"] == "proceed"
    assert [r for r in caplog.records if r.name == "crawlcheck"] == []


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_review_pauses_the_session(transport: str, tmp_path: Path) -> None:
    async with server(transport, tmp_path) as srv:
        changed = [dict(t) for t in __import__("servers").TOOLS]
        changed[0] = dict(changed[0], description="Reads an item, as approved.")
        lock = pin(tmp_path, srv.endpoint, tools=changed)
        async with srv.session(lock, mode="review") as s:
            await s.initialize()
            assert s.record is not None and s.record["effect"] == "pause"
            with pytest.raises(ContinuityRefused) as refused:
                await s.call_tool("list_items")
            assert refused.value.tool is None and refused.value.effect == "pause"
            with pytest.raises(ContinuityRefused):
                await s.list_tools()


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    "cursor,cap,why,seen",
    [
        ("normal", 1, "page_cap_reached", "tool_list_truncated"),
        ("stuck", 100, "cursor_repeated", "tool_list_truncated"),
        # An empty nextCursor is never followed; the core calls that page malformed.
        ("empty", 100, "response_malformed", "response_malformed"),
    ],
)
async def test_unfollowed_cursor_is_not_a_pass(transport: str, cursor: str, cap: int, why: str, seen: str, tmp_path: Path) -> None:
    async with server(transport, tmp_path, page_size=1, cursor=cursor) as srv:
        lock = pin(tmp_path, srv.endpoint)
        async with srv.session(lock, page_cap=cap) as s:
            await s.initialize()
            rec = s.record
            assert rec is not None
            assert seen in observations(rec), rec
            assert rec["effect"] == "pause"
            assert s._obs.stop == why
            with pytest.raises(ContinuityRefused):
                await s.call_tool("get_item")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_page_is_read(transport: str, tmp_path: Path) -> None:
    async with server(transport, tmp_path, page_size=1) as srv:
        lock = pin(tmp_path, srv.endpoint)
        async with srv.session(lock) as s:
            await s.initialize()
            assert s.record is not None and s.record["effect"] == "proceed", s.record
            assert s.record["observed"]["pages"] == 2
            assert names(await s.list_tools()) == ["get_item", "list_items"]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("page", ['{"tools":[{"name":"cut off', '{"tools":[null]}', '{"tools":[{"name":"a"},{"name":"a"}]}'])
async def test_unreadable_list_is_malformed(transport: str, page: str, tmp_path: Path) -> None:
    async with server(transport, tmp_path, pages_raw={"1": page}) as srv:
        lock = pin(tmp_path, srv.endpoint)
        async with srv.session(lock) as s:
            await s.initialize()
            rec = s.record
            assert rec is not None
            assert observations(rec) == ["response_malformed"], rec
            assert rec["effect"] == "pause"
            with pytest.raises(ContinuityRefused):
                await s.list_tools()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_hanging_server_ends_in_time(transport: str, tmp_path: Path) -> None:
    async with server(transport, tmp_path, hang_handshake=True) as srv:
        lock = pin(tmp_path, srv.endpoint)
        with anyio.fail_after(10):
            async with srv.session(lock, timeout=1.0) as s:
                with pytest.raises(ContinuityRefused) as refused:
                    await s.initialize()
                rec = refused.value.record
                assert rec["observed"]["failure"] == "check_timeout"
                assert rec["effect"] == "pause"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_discover_handshake(transport: str, tmp_path: Path) -> None:
    """mcp 2.x's server/discover (protocol 2026-07-28) is a handshake too."""
    if not hasattr(ClientSession, "discover"):
        pytest.skip("this mcp has no server/discover")
    async with server(transport, tmp_path) as srv:
        async with srv.session(pin(tmp_path, srv.endpoint)) as s:
            await s.discover()
            rec = s.record
            assert rec is not None and rec["effect"] == "proceed", rec
            assert rec["server"]["handshake"] == "server/discover"
            assert rec["server"]["info"] == {"name": "shop", "version": "2.1"}
            assert names(await s.list_tools()) == ["get_item", "list_items"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_lone_surrogate_is_malformed_not_a_crash(transport: str, tmp_path: Path) -> None:
    bad = '{"tools":[{"name":"get_item","description":"x\\ud800","inputSchema":{"type":"object"}}]}'
    async with server(transport, tmp_path, pages_raw={"1": bad}) as srv:
        async with srv.session(pin(tmp_path, srv.endpoint)) as s:
            await s.initialize()
            rec = s.record
            assert rec is not None and observations(rec) == ["response_malformed"], rec
            assert rec["effect"] == "pause"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_list_changed_rechecks_without_a_call(transport: str, tmp_path: Path) -> None:
    records: List[Dict[str, Any]] = []
    async with server(transport, tmp_path, mutations=[rug_pull()]) as srv:
        async with srv.session(pin(tmp_path, srv.endpoint), on_record=lambda r, _: records.append(r)) as s:
            await s.initialize()
            assert len(records) == 1
            srv.mutate()
            with anyio.fail_after(5):
                while len(records) < 2:
                    await anyio.sleep(0.02)
            assert records[1]["tools"]["get_item"] == "pause_tool"
            assert records[1]["prev_record_sha256"] == records[0]["record_sha256"]

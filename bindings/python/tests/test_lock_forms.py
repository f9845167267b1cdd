"""Issue 17, item 2 (the Python wrapper items): ``lock`` is a path, bytes or
a mapping at every entry point, as in JS, with JS's errors; a missing or bad
lockfile is PreflightError itself (never inside an ExceptionGroup) from
with_preflight and the three adapters; and every wrapper keeps its
``records``, oldest first, the newest MAX_KEPT_RECORDS."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from servers import MCPSERVER, NOW, TOOLS, http_server, pin, scenario
from test_preflight import server

import crawlcheck.preflight as preflight
from crawlcheck.preflight import PreflightError, endpoint_of, with_preflight

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def forms(path: Path) -> Dict[str, Any]:
    data = path.read_bytes()
    return {"path": path, "str": str(path), "bytes": data, "bytearray": bytearray(data), "mapping": json.loads(data)}


@pytest.mark.parametrize("form", ["path", "str", "bytes", "bytearray", "mapping"])
async def test_a_lock_given_as_a_path_bytes_or_a_mapping_gives_the_same_record(form: str, tmp_path: Path) -> None:
    async with server("stdio", tmp_path, handshake="initialize") as srv:
        path = pin(tmp_path, srv.endpoint)
        raws: Dict[str, List[bytes]] = {}
        for f in ("path", form):
            raws[f] = []
            async with srv.session(forms(path)[f], wire=True, on_record=lambda _, raw, f=f: raws[f].append(raw)) as s:
                await s.initialize()
                assert s.record is not None and s.record["effect"] == "proceed"
                if f in ("bytes", "bytearray", "mapping"):
                    with pytest.raises(PreflightError, match="the lockfile was given as bytes; give its path to rewrite it"):
                        await s.confirm("get_item")
        assert raws[form] == raws["path"]


async def test_a_lock_of_another_type_is_a_type_error_with_js_words(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"crawlcheck: with_preflight needs lock: the lockfile's path \(or its bytes\)"):
        with_preflight(None, None)  # type: ignore[arg-type]
    for bad in (42, 1.5, True, object()):
        with pytest.raises(TypeError, match="crawlcheck: lock: bytes, text or a JSON value"):
            with_preflight(None, bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="crawlcheck: lock: bytes, text or a JSON value"):
        with_preflight(None, {"v": float("nan")})
    # A value that is JSON but no lockfile is the core's to refuse, as in JS.
    with pytest.raises(PreflightError, match="crawlcheck: lockfile: "):
        with_preflight(None, {"kind": "crawlcheck-mcp-lock"})


def bad_locks(tmp: Path) -> Dict[str, Any]:
    dup = tmp / "dup.lock.json"
    dup.write_text('{"kind":"crawlcheck-mcp-lock","v":1,"v":1}')
    return {"missing": tmp / "missing.json", "repeated key": dup, "bytes": b"not json"}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_with_preflight_raises_preflight_error_itself(transport: str, tmp_path: Path) -> None:
    """with_preflight reads the lockfile when it is called, before a session
    exists; crawlcheck.transport's transports let it out of their task group
    as itself. (mcp's own transports wrap whatever their body raises in their
    group: there it is the group's one exception.)"""
    for name, lock in bad_locks(tmp_path).items():
        with pytest.raises(PreflightError) as e:
            with_preflight(None, lock)
        assert type(e.value) is PreflightError, name
    async with server(transport, tmp_path) as srv:
        for name, lock in bad_locks(tmp_path).items():
            with pytest.raises(PreflightError) as e:
                async with srv.session(lock, wire=True):
                    pass
            assert type(e.value) is PreflightError, name


async def test_the_langchain_adapter_raises_preflight_error_itself(tmp_path: Path) -> None:
    pytest.importorskip("langchain_mcp_adapters")
    from langchain_mcp_adapters.client import MultiServerMCPClient

    from crawlcheck.langchain import load_mcp_tools_with_continuity

    with http_server(scenario(tmp_path)) as url:
        client = MultiServerMCPClient({"shop": {"url": url, "transport": "streamable_http"}})
        for name, lock in bad_locks(tmp_path).items():
            with pytest.raises(PreflightError) as e:
                await load_mcp_tools_with_continuity(client, lock, server_name="shop", now=lambda: NOW)
            assert type(e.value) is PreflightError, name
        tools = await load_mcp_tools_with_continuity(client, json.loads(pin(tmp_path, url).read_text()), server_name="shop", now=lambda: NOW)
        assert sorted(t.name for t in tools) == ["get_item", "list_items"]
        assert [r["effect"] for r in tools.records] == ["proceed"] and tools.record == tools.records[-1]


def test_the_crewai_adapter_raises_preflight_error_itself(tmp_path: Path) -> None:
    pytest.importorskip("crewai_tools")
    from crewai_tools import MCPServerAdapter

    from crawlcheck.crewai import with_continuity

    params = StdioServerParameters(command=MCPSERVER, args=["--scenario", str(scenario(tmp_path))])
    for name, lock in bad_locks(tmp_path).items():
        with pytest.raises(PreflightError) as e:
            with with_continuity(MCPServerAdapter(params), lock, now=lambda: NOW):
                pass
        assert type(e.value) is PreflightError, name
    with with_continuity(MCPServerAdapter(params), pin(tmp_path, endpoint_of(params)).read_bytes(), now=lambda: NOW) as tools:
        assert sorted(t.name for t in tools) == ["get_item", "list_items"]
        assert [r["effect"] for r in tools.records] == ["proceed"] and tools.record == tools.records[-1]


async def test_the_agents_adapter_raises_preflight_error_itself_and_keeps_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("agents")
    from agents.mcp import MCPServerStdio

    from crawlcheck.openai_agents import with_continuity

    params = {"command": MCPSERVER, "args": ["--scenario", str(scenario(tmp_path))]}
    for name, lock in bad_locks(tmp_path).items():
        with pytest.raises(PreflightError) as e:
            with_continuity(MCPServerStdio(params=params, name="shop"), lock, now=lambda: NOW)
        assert type(e.value) is PreflightError, name
    monkeypatch.setattr("crawlcheck.openai_agents.MAX_KEPT_RECORDS", 3)
    lock = pin(tmp_path, endpoint_of([MCPSERVER, *params["args"]]))
    wrapped = with_continuity(MCPServerStdio(params=params, name="shop"), lock, now=lambda: NOW)
    seen: List[str] = []
    # Two connections, three checks each: the records of both, the newest three.
    for _ in range(2):
        async with wrapped.inner:
            for _ in range(3):
                await wrapped.list_tools()
                assert wrapped.record is not None
                seen.append(wrapped.record["record_sha256"])
        await wrapped.cleanup()
    assert [r["record_sha256"] for r in wrapped.records] == seen[-3:]


async def test_with_preflight_keeps_the_newest_records_oldest_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preflight, "MAX_KEPT_RECORDS", 3)
    async with server("stdio", tmp_path, tools=TOOLS) as srv:
        seen: List[str] = []
        async with srv.session(pin(tmp_path, srv.endpoint), wire=True, on_record=lambda r, _: seen.append(r["record_sha256"])) as s:
            await s.initialize()
            for _ in range(4):
                await s.recheck()
            assert len(seen) == 5
            assert [r["record_sha256"] for r in s.records] == seen[-3:]

"""crawlcheck.openai_agents with the real OpenAI Agents SDK (no model call):
the tools the Agent hands the model, and a refused call."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, List

import pytest
from servers import MCPSERVER, NOW, http_server, huge_answer_scenario, mutate_http, peak_while_refused, pin, rug_pull, scenario

pytest.importorskip("agents")
from agents import Agent, RunContextWrapper  # noqa: E402
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp  # noqa: E402

from crawlcheck.openai_agents import with_continuity  # noqa: E402
from crawlcheck.preflight import ContinuityRefused, endpoint_of  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def agents_server(transport: str, tmp: Path) -> AsyncIterator[Any]:
    # Legacy handshake: the scenario server answers tools/call in the pre-2026
    # shape, which mcp 2.x refuses on a 2026-07-28 session (no resultType).
    scen = scenario(tmp, handshake="initialize", mutations=[rug_pull()])
    if transport == "http":
        with http_server(scen) as url:
            async with MCPServerStreamableHttp(params={"url": url}, name="shop") as server:
                server.test_endpoint = url
                server.test_mutate = lambda: mutate_http(url)
                yield server
    else:
        trigger = tmp / "trigger"
        params = {"command": MCPSERVER, "args": ["--scenario", str(scen), "--trigger", str(trigger)]}
        async with MCPServerStdio(params=params, name="shop") as server:
            from servers import mutate_trigger

            server.test_endpoint = endpoint_of([MCPSERVER, *params["args"]])
            server.test_mutate = lambda: mutate_trigger(trigger)
            yield server


async def model_tools(agent: Agent) -> List[str]:
    return sorted(t.name for t in await agent.get_mcp_tools(RunContextWrapper(context=None)))


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_agent_gets_only_the_checked_tools(transport: str, tmp_path: Path) -> None:
    async with agents_server(transport, tmp_path) as server:
        lock = pin(tmp_path, server.test_endpoint)
        wrapped = with_continuity(server, lock, mode="enforce", now=lambda: NOW, log_path=str(tmp_path / "r.jsonl"))
        agent = Agent(name="a", instructions="-", mcp_servers=[wrapped])
        assert await model_tools(agent) == ["get_item", "list_items"]
        assert wrapped.record is not None and wrapped.record["effect"] == "proceed"

        server.test_mutate()
        # Checked at every list_tools: the rug-pulled tool is not handed over.
        assert await model_tools(agent) == ["list_items"]
        with pytest.raises(ContinuityRefused) as refused:
            await wrapped.call_tool("get_item", {"id": "1"})
        assert refused.value.record["tools"]["get_item"] == "pause_tool"
        assert (await wrapped.call_tool("list_items", {})).content[0].text == "called list_items"

        rec = await wrapped.confirm("get_item")
        assert rec["effect"] == "proceed"
        assert await model_tools(agent) == ["get_item", "list_items"]


async def test_observe_hands_every_tool(tmp_path: Path) -> None:
    async with agents_server("http", tmp_path) as server:
        lock = pin(tmp_path, server.test_endpoint, tools=[])
        wrapped = with_continuity(server, lock, mode="observe", now=lambda: NOW)
        agent = Agent(name="a", instructions="-", mcp_servers=[wrapped])
        assert await model_tools(agent) == ["get_item", "list_items"]
        assert wrapped.record is not None and wrapped.record["would"]["effect"] == "pause_tool"
        assert (await wrapped.call_tool("get_item", {"id": "1"})).content[0].text == "called get_item"


@pytest.mark.parametrize("kind", ["static", "dynamic"])
async def test_the_servers_own_tool_filter_is_kept(kind: str, tmp_path: Path) -> None:
    """issue 22, F11: a tool the operator's tool_filter blocks is neither
    handed to the model nor callable through the wrapper."""
    from crawlcheck.openai_agents import ToolFilterRefused

    async with agents_server("stdio", tmp_path) as server:
        if kind == "static":
            server.tool_filter = {"blocked_tool_names": ["get_item"]}
        else:
            server.tool_filter = lambda ctx, tool: tool.name != "get_item"
        lock = pin(tmp_path, server.test_endpoint)
        wrapped = with_continuity(server, lock, mode="enforce", now=lambda: NOW)
        agent = Agent(name="a", instructions="-", mcp_servers=[wrapped])
        assert await model_tools(agent) == ["list_items"]
        assert wrapped.record is not None and wrapped.record["tools"] == {"get_item": "proceed", "list_items": "proceed"}
        with pytest.raises(ToolFilterRefused) as refused:
            await wrapped.call_tool("get_item", {"id": "1"})
        assert refused.value.tool == "get_item"
        assert (await wrapped.call_tool("list_items", {})).content[0].text == "called list_items"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_64_mib_answer_is_refused_before_it_is_decoded(transport: str, tmp_path: Path) -> None:
    """The wrapped server connects on crawlcheck.transport (issue 22, F9): a
    64 MiB tools/list answer against a 1 MiB max_answer_bytes is refused as
    it arrives (tracemalloc's peak under 8 MiB while the check reads it, as
    tests/test_wire.py measures), and the check leaves a record."""
    scen = huge_answer_scenario(tmp_path)
    records: List[Any] = []

    async def check(server: Any, endpoint: str) -> None:
        lock = pin(tmp_path, endpoint)
        wrapped = with_continuity(server, lock, now=lambda: NOW, max_answer_bytes=1 << 20, timeout=60.0, on_record=lambda r, _: records.append(r))
        await wrapped.connect()
        try:
            peak = await peak_while_refused(wrapped.list_tools)
        finally:
            await wrapped.cleanup()
        assert peak < 8 << 20, f"peak {peak} bytes while reading a 64 MiB answer with a 1 MiB limit"

    if transport == "http":
        with http_server(scen) as url:
            await check(MCPServerStreamableHttp(params={"url": url, "timeout": 60}, name="big", client_session_timeout_seconds=60), url)
    else:
        params = {"command": MCPSERVER, "args": ["--scenario", str(scen)]}
        await check(MCPServerStdio(params=params, name="big", client_session_timeout_seconds=60), endpoint_of([MCPSERVER, *params["args"]]))
    assert len(records) == 1, records
    rec = records[0]
    assert rec["observed"]["failure"] == "server_unavailable" and rec["effect"] == "pause", rec
    assert "67108864" not in str(rec) and "1048576" in str(rec["observations"]), rec["observations"]

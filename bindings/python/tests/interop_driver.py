"""One cell of the interop matrix (hosttest/interop, docs/interop.md) on a
Python entry point, in the venv that has its framework (build/py-mcp1:
mcp 1.x, langchain-mcp-adapters, crewai-tools; build/py-mcp2: mcp 2.x,
openai-agents). argv[1] is the cell as JSON:
``{host, transport: "stdio"|"http"|"sse", command: [...] (stdio), url, lock,
mode, now (RFC 3339), log}``, host one of ``py-mcp1``/``py-mcp2``
(``with_preflight``), ``py-langchain``, ``py-agents``, ``py-crewai`` (``mcp_tools``),
``py-crewai-adapter`` (``with_continuity(MCPServerAdapter(...))``). One
session, wired as docs/python.md tells a user to: check, take the tools the
framework would hand the model, close. Prints
``{"handed": [MCP names] | null, "refused": message | null}``; the records
are the log's (the matrix reads it)."""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any, AsyncIterator, Dict, List, Optional

import anyio

from crawlcheck import ContinuityRefused, with_preflight

cell = json.loads(sys.argv[1])
NOW = datetime.fromisoformat(cell["now"].replace("Z", "+00:00"))
# McpPreflight's options, the same for every entry point.
OPTIONS: Dict[str, Any] = dict(mode=cell["mode"], now=lambda: NOW, log_path=cell["log"])


@asynccontextmanager
async def streams() -> AsyncIterator[Any]:
    """The mcp transport's (read, write) and the endpoint the preflight names."""
    if cell["transport"] == "stdio":
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=cell["command"][0], args=cell["command"][1:])
        async with stdio_client(params) as (read, write):
            yield read, write, params
    elif cell["transport"] == "http":
        from mcp.client import streamable_http as sh

        connect = getattr(sh, "streamable_http_client", None) or getattr(sh, "streamablehttp_client")
        async with connect(cell["url"]) as s:
            yield s[0], s[1], cell["url"]
    else:
        from mcp.client.sse import sse_client

        async with sse_client(cell["url"]) as (read, write):
            yield read, write, cell["url"]


async def preflight() -> List[str]:
    from mcp import ClientSession

    async with streams() as (read, write, endpoint):
        async with with_preflight(ClientSession(read, write), cell["lock"], endpoint=endpoint, **OPTIONS) as s:
            await s.initialize()
            tools = await s.list_tools()
            return [t.name for t in tools.tools]


async def langchain() -> List[str]:
    """A MultiServerMCPClient connection of the cell's transport, its tools
    through load_mcp_tools_with_continuity (docs/python.md, Adapters)."""
    from langchain_mcp_adapters.client import MultiServerMCPClient

    from crawlcheck.langchain import load_mcp_tools_with_continuity

    connection: Dict[str, Any] = {
        "stdio": lambda: {"transport": "stdio", "command": cell["command"][0], "args": cell["command"][1:]},
        "http": lambda: {"transport": "streamable_http", "url": cell["url"]},
        "sse": lambda: {"transport": "sse", "url": cell["url"]},
    }[cell["transport"]]()
    client = MultiServerMCPClient({"interop": connection})
    tools = await load_mcp_tools_with_continuity(client, cell["lock"], server_name="interop", **OPTIONS)
    return [t.name for t in tools]


async def agents() -> List[str]:
    """An Agents SDK server of the cell's transport, wrapped before it is
    connected and connected through the wrapper; the tools are what the
    Agent hands the model (Agent.get_mcp_tools)."""
    from agents import Agent, RunContextWrapper
    from agents.mcp import MCPServerSse, MCPServerStdio, MCPServerStreamableHttp

    from crawlcheck.openai_agents import with_continuity

    if cell["transport"] == "stdio":
        server: Any = MCPServerStdio(params={"command": cell["command"][0], "args": cell["command"][1:]}, name="interop")
    elif cell["transport"] == "http":
        server = MCPServerStreamableHttp(params={"url": cell["url"]}, name="interop")
    else:
        server = MCPServerSse(params={"url": cell["url"]}, name="interop")
    wrapped = with_continuity(server, cell["lock"], **OPTIONS)
    await wrapped.connect()
    try:
        agent = Agent(name="interop", instructions="-", mcp_servers=[wrapped])
        return [t.name for t in await agent.get_mcp_tools(RunContextWrapper(context=None))]
    finally:
        await wrapped.cleanup()


def crewai_params() -> Any:
    """MCPServerAdapter's server parameters for the cell's transport."""
    from mcp import StdioServerParameters

    if cell["transport"] == "stdio":
        return StdioServerParameters(command=cell["command"][0], args=cell["command"][1:])
    return {"url": cell["url"], "transport": "streamable-http" if cell["transport"] == "http" else "sse"}


def crewai() -> List[str]:
    """CrewAI's tools from crawlcheck.crewai.mcp_tools on MCPServerAdapter's
    server parameters (stdio, streamable HTTP: its bounded transports)."""
    from crawlcheck.crewai import mcp_tools

    with mcp_tools(crewai_params(), cell["lock"], **OPTIONS) as tools:
        return [t.name for t in tools]


def crewai_adapter() -> List[str]:
    """CrewAI's tools from crawlcheck.crewai.with_continuity on CrewAI's own
    MCPServerAdapter (every transport it serves, legacy SSE included)."""
    from crewai_tools import MCPServerAdapter

    from crawlcheck.crewai import with_continuity

    with with_continuity(MCPServerAdapter(crewai_params()), cell["lock"], **OPTIONS) as tools:
        return [t.name for t in tools]


async def session() -> Optional[List[str]]:
    host = cell["host"]
    if host in ("py-mcp1", "py-mcp2"):
        return await preflight()
    if host == "py-langchain":
        return await langchain()
    if host == "py-agents":
        return await agents()
    if host == "py-crewai":
        return await anyio.to_thread.run_sync(crewai)
    if host == "py-crewai-adapter":
        return await anyio.to_thread.run_sync(crewai_adapter)
    raise ValueError(f"unknown host {host}")


async def main() -> None:
    out: dict = {"handed": None, "refused": None}
    try:
        out["handed"] = await session()
    except BaseException as e:  # an ExceptionGroup may carry the refusal
        refused = find(e)
        if refused is None:
            raise
        out["refused"] = str(refused)
    sys.stdout.write(json.dumps(out) + "\n")


def find(e: BaseException) -> Optional[ContinuityRefused]:
    if isinstance(e, ContinuityRefused):
        return e
    for sub in getattr(e, "exceptions", ()):
        if (r := find(sub)) is not None:
            return r
    return find(e.__cause__) if e.__cause__ is not None else None


anyio.run(main)

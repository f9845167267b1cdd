"""Regressions found against servers nobody here wrote (a FastMCP server of
the ``mcp`` package, server-everything over SSE), through the real frameworks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from reference import cli, cli_lock, everything, fastmcp
from servers import NOW, NOW_S

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_langchain_sends_nothing_before_initialize_to_a_stateful_server(tmp_path: Path) -> None:
    pytest.importorskip("langchain_mcp_adapters")
    from langchain_mcp_adapters.client import MultiServerMCPClient

    from crawlcheck.langchain import load_mcp_tools_with_continuity

    with fastmcp() as url:
        lock = cli_lock(tmp_path, ["--url", url])
        want = cli("check", "--lock", str(lock), "--url", url, "--capabilities", "none", "--now", NOW_S, "--json").strip()
        client = MultiServerMCPClient({"ref": {"transport": "streamable_http", "url": url}})
        raws: List[bytes] = []
        records: List[Dict[str, Any]] = []
        tools = await load_mcp_tools_with_continuity(
            client, lock, server_name="ref", now=lambda: NOW, on_record=lambda r, raw: (records.append(r), raws.append(raw))
        )
        assert sorted(t.name for t in tools) == ["add", "echo"]
        assert records[-1]["effect"] == "proceed", records[-1]
        assert raws[-1].decode() == want


async def test_with_preflight_over_mcps_sse_client_records_what_crawlcheck_check_sse_does(tmp_path: Path) -> None:
    # The legacy HTTP+SSE transport (protocol 2024-11-05) of server-everything,
    # the TypeScript reference server, through mcp's own sse_client.
    from mcp import ClientSession
    from mcp.client.sse import sse_client

    from crawlcheck import with_preflight

    with everything("sse") as base:
        url = f"{base}/sse"
        lock = cli_lock(tmp_path, ["--sse", url])
        want = cli("check", "--lock", str(lock), "--sse", url, "--now", NOW_S, "--json").strip()
        assert json.loads(want)["effect"] == "proceed", want
        raws: List[bytes] = []
        async with sse_client(url) as (read, write):
            async with with_preflight(ClientSession(read, write), lock, endpoint=url, now=lambda: NOW, on_record=lambda _, raw: raws.append(raw)) as s:
                await s.initialize()
                tools = await s.list_tools()
        assert len(tools.tools) == 13
        assert raws[0].decode() == want

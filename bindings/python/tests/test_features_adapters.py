"""The adapters that expose prompts and resources hand over only what the
record covers (issue 35, item 2): the OpenAI Agents SDK's MCPServer
(list_prompts, get_prompt, list_resources, list_resource_templates,
read_resource; mcp 2.x) and LangChain's client.get_prompt /
client.get_resources through langchain-mcp-adapters' own loaders (mcp 1.x),
against the scenario server with a prompt rug-pulled after approval and a
ui:// template swapped. Each test runs in the environment that has its
framework."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from servers import NOW, http_server, mutate_http, scenario
from test_features import FEATURES, RUG_PULL, SWAP, TOOLS, lock_features

from crawlcheck import ItemRefused

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_openai_agents_server_hands_over_the_checked_prompts_and_resources(tmp_path: Path) -> None:
    pytest.importorskip("agents")
    from agents.mcp import MCPServerStreamableHttp

    from crawlcheck.openai_agents import with_continuity

    # Legacy handshake, as test_openai_agents.py runs the scenario server.
    with http_server(scenario(tmp_path, handshake="initialize", tools=TOOLS, **FEATURES)) as url:
        lock = lock_features(tmp_path, url)
        async with MCPServerStreamableHttp(params={"url": url}, name="issues") as server:
            wrapped = with_continuity(server, lock, mode="enforce", now=lambda: NOW)
            prompts = (await wrapped.list_prompts()).prompts
            assert [p.name for p in prompts] == ["triage", "weekly"]
            assert "x-vendor" not in prompts[0].model_dump(by_alias=True, exclude_none=True)
            assert [str(r.uri) for r in (await wrapped.list_resources()).resources] == ["issues://readme"]
            templates = (await wrapped.list_resource_templates()).model_dump(by_alias=True)["resourceTemplates"]
            assert [t["uriTemplate"] for t in templates] == ["issues://issue/{number}"]
            assert (await wrapped.read_resource("issues://readme")).contents[0].text == "# Read me"
            with pytest.raises(ItemRefused):
                await wrapped.read_resource("file:///etc/passwd")
            assert (await wrapped.read_resource("ui://issues/view")).contents[0].text == "<div id=issue></div>"

            mutate_http(url, SWAP)
            with pytest.raises(ItemRefused) as swapped:
                await wrapped.read_resource("ui://issues/view")
            assert "its contents changed since it was approved" in str(swapped.value)
            mutate_http(url, RUG_PULL)
            # The Agents SDK lists tools at each run: the check runs there.
            await wrapped.list_tools()
            assert [p.name for p in (await wrapped.list_prompts()).prompts] == ["weekly"]
            with pytest.raises(ItemRefused) as withheld:
                await wrapped.get_prompt("triage")
            assert str(withheld.value).startswith('crawlcheck: prompt "triage" withheld (pause_tool): prompt_changed')


async def test_langchain_prompt_and_resources_come_from_the_checked_session(tmp_path: Path) -> None:
    pytest.importorskip("langchain_mcp_adapters")
    from langchain_mcp_adapters.client import MultiServerMCPClient

    from crawlcheck.langchain import load_mcp_prompt_with_continuity, load_mcp_resources_with_continuity

    with http_server(scenario(tmp_path, tools=TOOLS, **FEATURES)) as url:
        lock = lock_features(tmp_path, url)
        client = MultiServerMCPClient({"issues": {"transport": "streamable_http", "url": url}})
        blobs: Any = await load_mcp_resources_with_continuity(client, lock, server_name="issues", now=lambda: NOW)
        # Without uris: the resources of the checked list, read through the checked session.
        assert [(str(b.metadata["uri"]), b.as_string()) for b in blobs] == [("issues://readme", "# Read me")]
        assert blobs.record is not None and blobs.record["effect"] == "proceed"
        view = await load_mcp_resources_with_continuity(client, lock, server_name="issues", uris="ui://issues/view", now=lambda: NOW)
        assert view[0].as_string() == "<div id=issue></div>"
        with pytest.raises(ItemRefused) as unlisted:
            await load_mcp_resources_with_continuity(client, lock, server_name="issues", uris=["issues://readme", "file:///etc/passwd"], now=lambda: NOW)
        assert 'resource "file:///etc/passwd" refused: not in the checked list' in str(unlisted.value)

        mutate_http(url, SWAP)
        with pytest.raises(ItemRefused) as swapped:
            await load_mcp_resources_with_continuity(client, lock, server_name="issues", uris="ui://issues/view", now=lambda: NOW)
        assert "ui://issues/view" in str(swapped.value)
        mutate_http(url, RUG_PULL)
        with pytest.raises(ItemRefused) as withheld:
            await load_mcp_prompt_with_continuity(client, lock, server_name="issues", prompt_name="triage", now=lambda: NOW)
        assert str(withheld.value).startswith('crawlcheck: prompt "triage" withheld (pause_tool): prompt_changed')
        # weekly is handed over: prompts/get reaches the server, which does not serve it.
        with pytest.raises(Exception) as answered:  # noqa: B017 - the server's own answer
            await load_mcp_prompt_with_continuity(client, lock, server_name="issues", prompt_name="weekly", now=lambda: NOW)
        assert not isinstance(answered.value, ItemRefused), answered.value

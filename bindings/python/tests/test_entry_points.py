"""Issue 34, item 2: the documented entry point reads and judges the
lockfile before anything is started, and what it raises is a
CrawlcheckError subclass itself, never an ExceptionGroup of anyio's task
groups: ``with_preflight(stdio_client(params), lock, endpoint=params)`` on
mcp's own stdio_client and on crawlcheck.transport's, on the real mcp
package (the mcp 1.x and 2.x venvs run this file)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Dict

import pytest
from servers import MCPSERVER, NOW, TOOLS, http_server, pin, scenario
from test_lock_forms import bad_locks

import crawlcheck
import crawlcheck.transport
from crawlcheck.preflight import ContinuityRefused, PreflightError, endpoint_of, with_preflight

mcp = pytest.importorskip("mcp")
from mcp import StdioServerParameters  # noqa: E402
from mcp.client import stdio as mcp_stdio  # noqa: E402

pytestmark = pytest.mark.anyio

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def mcp_http(url: str) -> Any:
    from mcp.client import streamable_http as sh

    fn = getattr(sh, "streamable_http_client", None) or getattr(sh, "streamablehttp_client")
    return fn(url)


STDIO: Dict[str, Callable[[Any], Any]] = {"mcp": mcp_stdio.stdio_client, "crawlcheck.transport": crawlcheck.transport.stdio_client}


def marked_server(tmp: Path) -> "tuple[StdioServerParameters, Path]":
    """The scenario server behind a shell that leaves a file when it starts."""
    marker = tmp / "started"
    scen = scenario(tmp)
    return StdioServerParameters(command="sh", args=["-c", f'touch "{marker}"; exec "{MCPSERVER}" --scenario "{scen}"']), marker


def approving_another_description(tmp: Path, endpoint: str) -> Path:
    approved = [dict(t) for t in TOOLS]
    approved[0] = dict(approved[0], description="Reads an item, as approved.")
    return pin(tmp, endpoint, tools=approved)


@pytest.mark.parametrize("transport", list(STDIO))
async def test_a_bad_lockfile_is_preflight_error_itself_and_nothing_starts(transport: str, tmp_path: Path) -> None:
    params, marker = marked_server(tmp_path)
    for name, lock in bad_locks(tmp_path).items():
        with pytest.raises(PreflightError) as e:
            async with with_preflight(STDIO[transport](params), lock, endpoint=params):
                pass
        assert type(e.value) is PreflightError, name
        assert not marker.exists(), f"{name}: the server was started"
    # The marker does say when the server starts.
    async with with_preflight(STDIO[transport](params), pin(tmp_path, endpoint_of(params)), endpoint=params, now=lambda: NOW) as s:
        await s.initialize()
        assert s.record is not None and s.record["effect"] == "proceed"
    assert marker.exists()


@pytest.mark.parametrize("transport", list(STDIO))
async def test_a_refused_call_is_continuity_refused_itself(transport: str, tmp_path: Path) -> None:
    params = StdioServerParameters(command=MCPSERVER, args=["--scenario", str(scenario(tmp_path))])
    lock = approving_another_description(tmp_path, endpoint_of(params))
    try:
        async with with_preflight(STDIO[transport](params), lock, endpoint=params, now=lambda: NOW, timeout=5.0) as s:
            await s.initialize()
            assert [t.name for t in (await s.list_tools()).tools] == ["list_items"]
            await s.call_tool("get_item", {"id": "1"})
    except crawlcheck.CrawlcheckError as e:
        assert type(e) is ContinuityRefused
        assert e.tool == "get_item" and e.effect == "pause_tool"
    except BaseExceptionGroup as g:  # what mcp's task groups made of it before
        pytest.fail(f"an exception group: {g!r}")
    else:
        pytest.fail("no refusal")


@pytest.mark.parametrize("transport", list(STDIO))
async def test_the_body_s_own_exception_comes_out_as_itself(transport: str, tmp_path: Path) -> None:
    params = StdioServerParameters(command=MCPSERVER, args=["--scenario", str(scenario(tmp_path))])
    with pytest.raises(KeyError) as e:
        async with with_preflight(STDIO[transport](params), pin(tmp_path, endpoint_of(params)), endpoint=params, now=lambda: NOW) as s:
            await s.initialize()
            raise KeyError("the application's own")
    assert type(e.value) is KeyError


async def test_over_mcp_streamable_http_too(tmp_path: Path) -> None:
    with http_server(scenario(tmp_path)) as url:
        lock = approving_another_description(tmp_path, url)
        with pytest.raises(ContinuityRefused) as e:
            async with with_preflight(mcp_http(url), lock, endpoint=url, now=lambda: NOW, timeout=5.0) as s:
                await s.initialize()
                await s.call_tool("get_item", {"id": "1"})
        assert type(e.value) is ContinuityRefused and e.value.tool == "get_item"
        for name, bad in bad_locks(tmp_path).items():
            with pytest.raises(PreflightError) as pe:
                async with with_preflight(mcp_http(url), bad, endpoint=url):
                    pass
            assert type(pe.value) is PreflightError, name

"""crawlcheck.crewai.with_continuity: the continuity check on a CrewAI
``MCPServerAdapter`` (crewai-tools[mcp]), as a context manager giving the
tools an agent may use.

The adapter has started its server and read the tool list by the time it is
handed over, and it reads only the first ``tools/list`` page: a list whose
other pages changed, or that never ends, would pass unseen. So the check
does its own reading, on the adapter's own session (the server the tools
will call): every page, to the page cap, checked whole. Decision
(docs/decisions.md): the whole list is compared, whatever CrewAI read; a
list that cannot be read whole pauses the session like everywhere else
(ContinuityRefused); a change on any page withholds that tool; and the tools
handed over are built by the adapter's own CrewAI adapter from the objects
the core answered for this check (continuity_handoff), never from CrewAI's
earlier listing, and each calls its tool by its exact MCP name through the
preflight's gate (issue 22, F1 and F2: no name is compared after CrewAI's
sanitizing). Leaving the context stops the adapter.

``with_continuity`` cannot bound the adapter's own first listing:
MCPServerAdapter connects and lists in its constructor, on mcpadapt's
transports, before it is handed over, so a huge first answer is decoded
whole and can fail the constructor with no record. ``mcp_tools`` takes the
server parameters instead (as MCPServerAdapter does) and never needs
CrewAI's listing: the check runs on crawlcheck.transport (every frame bounded
before it is decoded, a record on every outcome; legacy SSE on mcp's own
client, bounded after decoding), and the CrewAI tools are built by mcpadapt's
CrewAIAdapter from the core's handoff objects, calling through the
preflight's gate on that same session (issue 22, F9). Its session is tapped
before its handshake, so its records hold the handshake; with_continuity's
cannot: the adapter's handshake is over before it is handed over, and
neither mcp 1.x's ClientSession nor mcpadapt keeps the initialize answer, so
its records have no handshake, the instructions and the server's identity
among their ``blind_parts`` (issue 17).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from contextlib import contextmanager
from functools import partial
from typing import Any, Dict, Iterator, List, Optional, Union

from . import transport
from ._options import Options
from .preflight import CheckedTools, Lock, McpPreflight

__all__ = ["mcp_tools", "with_continuity"]


def _endpoint(params: Any) -> Union[str, Any, None]:
    if isinstance(params, dict) and params.get("url"):
        return str(params["url"])
    if hasattr(params, "command"):
        return params
    return None


@contextmanager
def with_continuity(adapter: Any, lock: Lock, mode: str | None = None, **options: Any) -> Iterator[CheckedTools]:
    """Checks the adapter's server and yields the tools the record lets
    through, with the check's ``records`` (CheckedTools); options are
    McpPreflight's (log_path, on_record, policy, ...). A paused or denied
    session raises ContinuityRefused with the record; a missing or bad
    lockfile PreflightError."""
    try:
        inner = adapter._adapter  # MCPAdapt: its own loop, in a thread
        loop, session = inner.loop, inner.sessions[0]
        pf = McpPreflight(
            session,
            lock,
            endpoint=_endpoint(getattr(adapter, "_serverparams", None)),
            mode=mode,
            **Options(**options),  # type: ignore[typeddict-item]
        )

        async def check() -> List[Any]:
            await pf.attach()
            await pf.recheck()
            return list((await pf.list_tools()).tools)

        def call(name: str, arguments: Optional[Dict[str, Any]] = None) -> Any:
            # By its MCP name, through the gate: a withheld tool is refused.
            return asyncio.run_coroutine_threadsafe(pf.call_tool(name, arguments), loop).result()

        try:
            handed = asyncio.run_coroutine_threadsafe(check(), loop).result(pf.timeout * 3)
            yield CheckedTools([inner.adapter.adapt(partial(call, t.name), t) for t in handed], pf.records)
        finally:
            pf.close()
    finally:
        adapter.stop()


def _streams(params: Any) -> Any:
    """The streams for MCPServerAdapter's server parameters: a
    StdioServerParameters, or a dict with a ``url`` and a ``transport``
    (mcpadapt's default ``"sse"``). Stdio and ``"streamable-http"`` (its
    ``headers`` and ``timeout`` as mcpadapt reads them) run on
    crawlcheck.transport. Legacy SSE has no bounded transport here: it runs
    on mcp's own ``sse_client``, opened as mcpadapt opens it (the dict's
    other keys its arguments), bounded after decoding, as LangChain's sse
    connections are; the session is still the check's, tapped before its
    handshake, so its record sees the handshake and every page."""
    if hasattr(params, "command"):
        return transport.stdio_client(params)
    if isinstance(params, dict) and params.get("url"):
        kind = params.get("transport", "sse")
        if kind == "streamable-http":
            return transport.streamable_http_client(str(params["url"]), headers=params.get("headers"), timeout=params.get("timeout"))
        if kind == "sse":
            from mcp.client.sse import sse_client

            return sse_client(**{k: v for k, v in params.items() if k != "transport"})
    raise ValueError(
        "crawlcheck.crewai.mcp_tools takes a StdioServerParameters or a dict with url and "
        f'transport "streamable-http" or "sse" (got {type(params).__name__}'
        + (f" with transport {params.get('transport')!r})" if isinstance(params, dict) else ")")
    )


@contextmanager
def mcp_tools(serverparams: Any, lock: Lock, mode: str | None = None, **options: Any) -> Iterator[CheckedTools]:
    """Checks the server of ``serverparams`` (what MCPServerAdapter takes) on
    crawlcheck.transport (legacy SSE: mcp's ``sse_client``) and yields the CrewAI tools the record lets
    through, with the check's ``records`` (CheckedTools); options are
    McpPreflight's. The session lives in a thread of its own (CrewAI's tools
    are synchronous) until the context is left. A paused or denied session
    raises ContinuityRefused with the record, whatever the server sent; a
    missing or bad lockfile PreflightError, before anything is started."""
    from mcp import ClientSession
    from mcpadapt.crewai_adapter import CrewAIAdapter

    streams = _streams(serverparams)
    # Made (the lockfile read and verified) before the server is started.
    pf = McpPreflight(None, lock, endpoint=_endpoint(serverparams), mode=mode, **Options(**options))  # type: ignore[typeddict-item]
    checked: "concurrent.futures.Future[List[Any]]" = concurrent.futures.Future()
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def session() -> None:
        # One task enters and leaves the transport (anyio's cancel scopes
        # are per task); the check's outcome is handed out through
        # ``checked``, raised outside the transport's task group.
        try:
            async with streams as (read, write, *_):
                async with ClientSession(read, write) as s:
                    pf.session = s
                    try:
                        await pf.attach(initialized=False)
                        await pf.initialize()
                        checked.set_result(list((await pf.list_tools()).tools))
                    except Exception as e:
                        checked.set_exception(e)
                        return
                    await stop.wait()
        except BaseException as e:
            # Before the outcome, the transport's failure is the outcome;
            # after it (the record is written), a fault while closing is
            # not raised over the tools' results, but a cancel is.
            if not checked.done():
                checked.set_exception(e)
            elif not isinstance(e, Exception):
                raise

    def call(name: str, arguments: Optional[Dict[str, Any]] = None) -> Any:
        # By its MCP name, through the gate: a withheld tool is refused.
        return asyncio.run_coroutine_threadsafe(pf.call_tool(name, arguments), loop).result()

    thread = threading.Thread(target=loop.run_forever, name="crawlcheck-crewai", daemon=True)
    thread.start()
    running = asyncio.run_coroutine_threadsafe(session(), loop)
    try:
        handed = checked.result()
        adapter = CrewAIAdapter()
        yield CheckedTools([adapter.adapt(partial(call, t.name), t) for t in handed], pf.records)
    finally:
        loop.call_soon_threadsafe(stop.set)
        try:
            running.result(pf.timeout * 3)
        finally:
            pf.close()
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()

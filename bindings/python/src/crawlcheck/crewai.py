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
"""

from __future__ import annotations

import asyncio
from contextlib import contextmanager
from functools import partial
from typing import Any, Dict, Iterator, List, Optional, Union

from ._options import Options
from .preflight import CheckedTools, Lock, McpPreflight

__all__ = ["with_continuity"]


def _endpoint(params: Any) -> Union[str, Any, None]:
    if isinstance(params, dict) and params.get("url"):
        return str(params["url"])
    if hasattr(params, "command"):
        return params
    return None


@contextmanager
def with_continuity(adapter: Any, lock: Lock, mode: str = "enforce", **options: Any) -> Iterator[CheckedTools]:
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

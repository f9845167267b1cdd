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
handed over are the adapter's tools the record lets through, by name — the
adapter cannot build tools of later pages, so they are never handed over,
but they are compared. Calls are not checked again: enter again to check
again. Leaving the context stops the adapter.
"""

from __future__ import annotations

import asyncio
import os
from contextlib import contextmanager
from typing import Any, Iterator, List, Union

from crewai.utilities.string_utils import sanitize_tool_name

from ._options import Options
from .preflight import McpPreflight

__all__ = ["with_continuity"]


def _endpoint(params: Any) -> Union[str, Any, None]:
    if isinstance(params, dict) and params.get("url"):
        return str(params["url"])
    if hasattr(params, "command"):
        return params
    return None


@contextmanager
def with_continuity(adapter: Any, lock: Union[str, "os.PathLike[str]"], mode: str = "enforce", **options: Any) -> Iterator[List[Any]]:
    """Checks the adapter's server and yields the tools the record lets
    through; options are McpPreflight's (log_path, on_record, policy, ...).
    A paused or denied session raises ContinuityRefused with the record."""
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

        async def check() -> List[str]:
            await pf.attach()
            await pf.recheck()
            return [t.name for t in (await pf.list_tools()).tools]

        try:
            allowed = {sanitize_tool_name(n) for n in asyncio.run_coroutine_threadsafe(check(), loop).result(pf.timeout * 3)}
        finally:
            pf.close()
        yield [t for t in adapter.tools if t.name in allowed]
    finally:
        adapter.stop()

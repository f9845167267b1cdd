"""One cell of the interop matrix (hosttest/interop, docs/interop.md) on
Python's ``with_preflight``, in the venv that runs it (mcp 1.x or 2.x).
argv[1] is the cell as JSON:
``{host, transport: "stdio"|"http"|"sse", command: [...] (stdio), url, lock,
mode, now (RFC 3339), log}``. One session: initialize through the preflight,
list the tools the model would get, close. Prints
``{"handed": [names] | null, "refused": message | null}``; the records are
the log's (the matrix reads it)."""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any, AsyncIterator, List, Optional

import anyio

from crawlcheck import ContinuityRefused, with_preflight

cell = json.loads(sys.argv[1])
NOW = datetime.fromisoformat(cell["now"].replace("Z", "+00:00"))


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


async def session() -> Optional[List[str]]:
    from mcp import ClientSession

    async with streams() as (read, write, endpoint):
        async with with_preflight(ClientSession(read, write), cell["lock"], endpoint=endpoint, mode=cell["mode"], now=lambda: NOW, log_path=cell["log"]) as s:
            await s.initialize()
            tools = await s.list_tools()
            return [t.name for t in tools.tools]


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

"""The official Python MCP client (mcp 1.x or 2.x, the row's venv) in front of
`crawlcheck run`, as a desktop client's config starts it: the gateway's Python
rows of the interop matrix (hosttest/interop).

argv[1]: a JSON object {command: [argv], calls: [tool names]}. Prints one JSON
object: {tools: [names], calls: [{name, text} | {name, code, message}]}.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, List

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

try:  # mcp 2.x names it MCPError, 1.x McpError
    from mcp.shared.exceptions import MCPError as McpError
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp.shared.exceptions import McpError  # type: ignore[attr-defined,no-redef]


async def main() -> None:
    spec = json.loads(sys.argv[1])
    params = StdioServerParameters(command=spec["command"][0], args=spec["command"][1:])
    out: Dict[str, Any] = {"tools": [], "calls": []}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            out["tools"] = [t.name for t in (await session.list_tools()).tools]
            calls: List[Dict[str, Any]] = out["calls"]
            for name in spec.get("calls", []):
                try:
                    res = await session.call_tool(name, {})
                    calls.append({"name": name, "text": getattr(res.content[0], "text", "") if res.content else ""})
                except McpError as err:
                    calls.append({"name": name, "code": err.error.code, "message": err.error.message})
    print(json.dumps(out))


anyio.run(main)

"""A FastMCP server of the ``mcp`` package (the SDK's own server framework,
not ours) over streamable HTTP, for the reference-server tests.

    python fastmcp_server.py [--stateless] [--json] [--instructions-file PATH]

listens on 127.0.0.1 on a port the system picks and prints its MCP URL as
the first line of stdout. ``--stateless`` is FastMCP's ``stateless_http``,
``--json`` its ``json_response``. The tool description can be changed in
flight by the byte-passing proxy of the test, never here. With
``--instructions-file`` the server's ``instructions`` are the file's text,
read again as each session starts (FastMCP's own ``instructions``, which its
low-level server hands every session's initialize): a test changes them
between lock and check by rewriting the file."""

from __future__ import annotations

import socket
import sys

import anyio
import uvicorn

try:
    from mcp.server.fastmcp import FastMCP
except ImportError:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as FastMCP  # type: ignore[no-redef]


def main() -> None:
    stateless = "--stateless" in sys.argv
    json_response = "--json" in sys.argv
    path = sys.argv[sys.argv.index("--instructions-file") + 1] if "--instructions-file" in sys.argv else ""
    mcp = FastMCP("reference-fastmcp", stateless_http=stateless, json_response=json_response)
    if path:
        low = mcp._mcp_server
        options = low.create_initialization_options

        def reread(*args: object, **kwargs: object) -> object:
            with open(path, encoding="utf-8") as f:
                low.instructions = f.read()
            return options(*args, **kwargs)  # type: ignore[arg-type]

        low.create_initialization_options = reread  # type: ignore[method-assign]

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        return a + b

    @mcp.tool()
    def echo(text: str) -> str:
        """Echoes the text back."""
        return text

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn serves
    port = sock.getsockname()[1]
    app = mcp.streamable_http_app()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    print(f"http://127.0.0.1:{port}/mcp", flush=True)
    anyio.run(server.serve, [sock])


if __name__ == "__main__":
    main()

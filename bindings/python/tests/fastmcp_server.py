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
between lock and check by rewriting the file. With ``--app-file PATH`` it
also serves an MCP Apps UI template: a tool ``show_view`` whose
``_meta.ui.resourceUri`` names ``ui://reference/view``, that resource (the
file's text, read again at each resources/read: a test swaps the template
by rewriting the file) and a prompt ``summarise``."""

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
    # mcp 1.x's FastMCP takes the HTTP options itself; 2.x's MCPServer
    # takes them at streamable_http_app.
    http = {"stateless_http": stateless, "json_response": json_response}
    try:
        mcp = FastMCP("reference-fastmcp", **http)  # type: ignore[arg-type]
        http = {}
    except TypeError:
        mcp = FastMCP("reference-fastmcp")
    if path:
        # The low-level server (1.x _mcp_server, 2.x _lowlevel_server) reads
        # its instructions attribute at each session's initialize (and 2.x's
        # server/discover): here it is the file's text as it is then.
        low = getattr(mcp, "_lowlevel_server", None) or getattr(mcp, "_mcp_server")

        class Rereading(type(low)):  # type: ignore[misc]
            @property
            def instructions(self) -> str:
                with open(path, encoding="utf-8") as f:
                    return f.read()

            @instructions.setter
            def instructions(self, _: object) -> None:
                pass

        low.__class__ = Rereading

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        return a + b

    @mcp.tool()
    def echo(text: str) -> str:
        """Echoes the text back."""
        return text

    app_file = sys.argv[sys.argv.index("--app-file") + 1] if "--app-file" in sys.argv else ""
    if app_file:

        @mcp.tool(meta={"ui": {"resourceUri": "ui://reference/view"}})
        def show_view() -> str:
            """Shows the view."""
            return "shown"

        @mcp.resource("ui://reference/view", mime_type="text/html;profile=mcp-app")
        def view() -> str:
            with open(app_file, encoding="utf-8") as f:
                return f.read()

        @mcp.prompt()
        def summarise(topic: str) -> str:
            """Summarise a topic in three lines."""
            return f"Summarise {topic} in three lines."

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn serves
    port = sock.getsockname()[1]
    app = mcp.streamable_http_app(**http)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    print(f"http://127.0.0.1:{port}/mcp", flush=True)
    anyio.run(server.serve, [sock])


if __name__ == "__main__":
    main()

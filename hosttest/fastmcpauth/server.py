"""A FastMCP server (the ``mcp`` package's own server framework, not ours)
behind FastMCP's bearer-token verifier, for the tests of servers behind a
login (issue 32, item 5).

    python server.py TOKEN

listens on 127.0.0.1 on a port the system picks and prints its MCP URL as
the first line of stdout. A request without ``Authorization: Bearer TOKEN``
is answered by FastMCP's own RequireAuthMiddleware: 401 with a
``WWW-Authenticate`` naming the protected resource metadata, which FastMCP
serves (RFC 9728). The verifier is the test's only part: it accepts TOKEN,
issued for this server's URL, and nothing else."""

from __future__ import annotations

import hmac
import socket
import sys

import anyio
import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.fastmcp import FastMCP


class OneToken:
    """A TokenVerifier that knows one token."""

    def __init__(self, token: str, resource: str) -> None:
        self.token = token
        self.resource = resource

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode(), self.token.encode()):
            return None
        return AccessToken(token=token, client_id="crawlcheck-test", scopes=[], expires_at=None, resource=self.resource)


def main() -> None:
    token = sys.argv[1]
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn serves
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    mcp = FastMCP(
        "fastmcp-behind-login",
        token_verifier=OneToken(token, url),
        auth=AuthSettings(issuer_url=f"http://127.0.0.1:{port}", resource_server_url=url, required_scopes=[]),
    )

    @mcp.tool()
    def get_issue(number: int) -> str:
        """Gets one issue."""
        return f"issue {number}"

    app = mcp.streamable_http_app()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    print(url, flush=True)
    anyio.run(server.serve, [sock])


if __name__ == "__main__":
    main()

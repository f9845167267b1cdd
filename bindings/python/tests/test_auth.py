"""Servers behind a login (issue 32, item 1): the TypeScript SDK's own
example streamable HTTP server with --oauth (@modelcontextprotocol/sdk, as
bindings/js/package.json pins it; make js-deps installs it) answers 401 with
a WWW-Authenticate naming its resource metadata. with_preflight on
crawlcheck.transport records the core's ``unauthorized`` fault with that
URL, byte for byte the record ``crawlcheck check --json`` writes for the
same server at the same --now, and no header value (the challenge's other
parameters, a header the client sent) reaches it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from importlib.metadata import version
from pathlib import Path
from typing import Iterator, List, Tuple

import anyio
import pytest
from servers import CLI, NOW, NOW_S, REPO, pin

from crawlcheck.preflight import ContinuityRefused, endpoint_of, with_preflight
from crawlcheck.transport import _httpx, resource_metadata_of, streamable_http_client

mcp = pytest.importorskip("mcp")
from mcp import ClientSession  # noqa: E402

EXAMPLE = REPO / "bindings" / "js" / "node_modules" / "@modelcontextprotocol" / "sdk" / "dist" / "esm" / "examples" / "server" / "simpleStreamableHttp.js"

SECRET = "x-api-key-value-never-recorded"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def example() -> Iterator[Tuple[str, int]]:
    """The example server with --oauth until it listens: its URL and port."""
    node = shutil.which("node")
    assert node is not None and EXAMPLE.exists(), "the TypeScript SDK's example server is missing: make js-deps"
    mcp_port, auth_port = _free_port(), _free_port()
    env = dict(os.environ, MCP_PORT=str(mcp_port), MCP_AUTH_PORT=str(auth_port))
    proc = subprocess.Popen([node, str(EXAMPLE), "--oauth"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("localhost", mcp_port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError("the example server did not listen within 20 s")
                time.sleep(0.05)
        yield f"http://localhost:{mcp_port}/mcp", mcp_port
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.anyio
async def test_a_401_records_unauthorized_with_the_resource_metadata_as_crawlcheck_check_does(example: Tuple[str, int], tmp_path: Path) -> None:
    url, port = example
    lock = pin(tmp_path, endpoint_of(url))
    out = subprocess.run([CLI, "check", "--lock", str(lock), "--url", url, "--now", NOW_S, "--json"], capture_output=True, timeout=120)
    go = out.stdout.splitlines()
    assert len(go) == 1, out.stderr.decode()
    detail = json.loads(go[0])["observations"][0]["detail"]["detail"]
    assert "HTTP 401" in detail and detail.endswith(f"; its resource metadata: http://localhost:{port}/.well-known/oauth-protected-resource/mcp"), detail
    py: List[bytes] = []
    # mcp 1.x's transport raises the 401 from its own task as the transport
    # closes (an HTTPStatusError, as for any error status): the SDK's,
    # after the check's refusal, and the record is made by then.
    sdk_error = _httpx().HTTPStatusError if version("mcp").startswith("1.") else ()
    with anyio.fail_after(60):
        try:
            async with streamable_http_client(url, headers={"X-Api-Key": SECRET}) as streams:
                async with with_preflight(ClientSession(streams[0], streams[1]), lock, endpoint=url, now=lambda: NOW, timeout=10.0, on_record=lambda _, raw: py.append(raw)) as s:
                    with pytest.raises(ContinuityRefused):
                        await s.initialize()
        except sdk_error as e:
            assert e.response.status_code == 401
    assert py == go, "\n".join(r[:900].decode("utf-8", "replace") for r in py + go)
    for word in (SECRET, "invalid_token", "Missing Authorization header"):
        assert word.encode() not in py[0], word


@pytest.fixture
def bearer() -> Iterator[str]:
    """bindings/js/test/bearer-server.js: a server behind the TypeScript
    SDK's own requireBearerAuth, whose "narrow-token" lacks the scope it
    requires (a 403 insufficient_scope); its URL."""
    node = shutil.which("node")
    assert node is not None and EXAMPLE.exists(), "the TypeScript SDK is missing: make js-deps"
    proc = subprocess.Popen([node, str(REPO / "bindings" / "js" / "test" / "bearer-server.js")], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().decode().strip()
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.anyio
async def test_a_403_records_forbidden_as_crawlcheck_check_header_does_and_the_token_nowhere(bearer: str, tmp_path: Path) -> None:
    url, token = bearer, "narrow-token"
    lock = pin(tmp_path, endpoint_of(url))
    out = subprocess.run([CLI, "check", "--lock", str(lock), "--url", url, "--header", f"Authorization: Bearer {token}", "--now", NOW_S, "--json"], capture_output=True, timeout=120)
    go = out.stdout.splitlines()
    assert len(go) == 1, out.stderr.decode()
    detail = json.loads(go[0])["observations"][0]["detail"]["detail"]
    assert "HTTP 403" in detail and detail.endswith("; its resource metadata: " + url.removesuffix("/mcp") + "/.well-known/oauth-protected-resource/mcp"), detail
    py: List[bytes] = []
    sdk_error = _httpx().HTTPStatusError if version("mcp").startswith("1.") else ()  # as for the 401
    with anyio.fail_after(60):
        try:
            async with streamable_http_client(url, headers={"Authorization": f"Bearer {token}"}) as streams:
                async with with_preflight(ClientSession(streams[0], streams[1]), lock, endpoint=url, now=lambda: NOW, timeout=10.0, on_record=lambda _, raw: py.append(raw)) as s:
                    with pytest.raises(ContinuityRefused):
                        await s.initialize()
        except sdk_error as e:
            assert e.response.status_code == 403
    assert py == go, "\n".join(r[:900].decode("utf-8", "replace") for r in py + go)
    for word in (token, "insufficient_scope", "Insufficient scope"):
        assert word.encode() not in py[0], word


def test_www_authenticate_vectors() -> None:
    """testdata/www-authenticate.json: the resource metadata URL the core's
    resource_metadata op keeps of each case's header lines, handed over as
    httpx gives them (bytes)."""
    cases = json.loads((REPO / "testdata" / "www-authenticate.json").read_text("utf-8"))["cases"]
    assert cases
    for c in cases:
        assert resource_metadata_of([line.encode() for line in c["www_authenticate"]]) == c["resource_metadata"], c["name"]

"""crawlcheck.langchain.load_mcp_tools_with_continuity: LangChain tools from
an MCP server (langchain-mcp-adapters' MultiServerMCPClient) that passed the
continuity check.

The check runs where the tools are fetched: a session made from the
client's connection (on crawlcheck.transport for stdio and streamable HTTP,
so every frame is bounded before it is decoded) is tapped before its
handshake, every ``tools/list`` page is read and checked, and the tools
returned are the
checked ones the record lets through, converted by langchain-mcp-adapters
as ``client.get_tools`` converts them (each call opens its own session, as
there). A session the record pauses or denies raises ContinuityRefused with
the record. Calls are not checked again: call this again to check again.

load_mcp_prompt_with_continuity and load_mcp_resources_with_continuity do
the same for ``client.get_prompt`` and ``client.get_resources`` (issue 35):
langchain-mcp-adapters' own loaders run on the checked session, whose
prompts and resources are the core's objects and whose prompts/get and
resources/read refuse what the record does not hand over (ItemRefused).
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List, Optional, Tuple, Union

from langchain_mcp_adapters import sessions as _sessions
from langchain_mcp_adapters.callbacks import CallbackContext
from langchain_mcp_adapters.prompts import load_mcp_prompt
from langchain_mcp_adapters.resources import load_mcp_resources
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool

from . import transport
from ._options import Options
from .preflight import CheckedTools, ContinuityRefused, Lock, McpPreflight

__all__ = ["load_mcp_prompt_with_continuity", "load_mcp_resources_with_continuity", "load_mcp_tools_with_continuity"]


def _endpoint(connection: Dict[str, Any]) -> Union[str, List[str], None]:
    if connection.get("url"):
        return str(connection["url"])
    if connection.get("command"):
        return [str(connection["command"]), *[str(a) for a in connection.get("args") or []]]
    return None


_HTTP = {"streamable_http", "streamable-http", "http"}


@asynccontextmanager
async def _session(client: Any, server_name: str, connection: Dict[str, Any]) -> AsyncIterator[Any]:
    """The check's session, not yet initialized. A stdio or streamable HTTP
    connection runs on crawlcheck.transport (issue 22, F9): every frame
    bounded by max_answer_bytes before it is decoded, the wire's bytes
    handed to the check; the session is made from the connection's settings
    as the client's own would be (its session_kwargs and callbacks, the
    command's environment with ``${VAR}`` expanded by langchain-mcp-adapters'
    own rule). Any other connection (sse, websocket, an HTTP connection with
    its own httpx_client_factory, whose client cannot carry the bound) is the
    client's own session: bounded after decoding, as on mcp's transports."""
    kind = connection.get("transport")
    if kind != "stdio" and not (kind in _HTTP and connection.get("httpx_client_factory") is None):
        async with client.session(server_name, auto_initialize=False) as session:
            yield session
        return
    from mcp import ClientSession, StdioServerParameters

    kwargs: Dict[str, Any] = dict(connection.get("session_kwargs") or {})
    callbacks = getattr(client, "callbacks", None)
    if callbacks is not None:
        mcp_callbacks = callbacks.to_mcp_format(context=CallbackContext(server_name=server_name))
        for name in ("logging_callback", "elicitation_callback"):
            if getattr(mcp_callbacks, name, None) is not None:
                kwargs[name] = getattr(mcp_callbacks, name)
    if kind == "stdio":
        env = connection.get("env")
        params = StdioServerParameters(
            command=str(connection["command"]),
            args=[str(a) for a in connection.get("args") or []],
            env=None if env is None else {k: _sessions._expand_env_vars(v) for k, v in env.items()},
            cwd=connection.get("cwd"),
        )
        streams = transport.stdio_client(params)
    else:
        streams = transport.streamable_http_client(
            str(connection["url"]),
            headers=connection.get("headers"),
            timeout=connection.get("timeout", _sessions.DEFAULT_STREAMABLE_HTTP_TIMEOUT),
            sse_read_timeout=connection.get("sse_read_timeout", _sessions.DEFAULT_STREAMABLE_HTTP_SSE_READ_TIMEOUT),
            auth=connection.get("auth"),
            terminate_on_close=connection.get("terminate_on_close", True),
        )
    async with streams as (read, write, *_):
        async with ClientSession(read, write, **kwargs) as session:
            yield session


async def _checked(client: Any, lock: Lock, server_name: str, mode: Optional[str], options: Dict[str, Any], use: Callable[[McpPreflight], Awaitable[Any]]) -> Tuple[McpPreflight, Any]:
    """Opens a session to server_name, checks it and answers use(preflight)
    with the session still open; a refusal (ContinuityRefused, ItemRefused)
    is raised once the session is closed, not from inside the transport's
    task group (which would wrap it in a group)."""
    on_preflight = options.pop("on_preflight", None)
    connection: Dict[str, Any] = client.connections[server_name]
    opts = Options(**options)  # type: ignore[typeddict-item]
    refused: Optional[ContinuityRefused] = None
    result: Any = None
    # Made (the lockfile read and verified) before the session: an error in
    # it is PreflightError itself, not one inside the transport's task group.
    pf = McpPreflight(None, lock, endpoint=_endpoint(connection), mode=mode, **opts)
    async with _session(client, server_name, connection) as session:
        pf.session = session
        try:
            await pf.attach(initialized=False)
            await pf.initialize()
            result = await use(pf)
        except ContinuityRefused as e:
            refused = e
        finally:
            pf.close()
        if on_preflight is not None:
            on_preflight(pf)
    if refused is not None:
        raise refused
    return pf, result


async def load_mcp_tools_with_continuity(
    client: Any,
    lock: Lock,
    *,
    server_name: str,
    mode: str | None = None,
    **options: Any,
) -> List[Any]:
    """The LangChain tools of ``server_name`` the continuity check lets
    through; options are McpPreflight's (log_path, on_record, policy, ...).
    ``options["on_preflight"]``, when given, is called with the McpPreflight
    (its record) before its session closes. The list returned carries the
    check's ``records`` and ``record`` (CheckedTools). A missing or bad
    lockfile is PreflightError, raised before any session is opened."""
    connection: Dict[str, Any] = client.connections[server_name]

    async def tools(pf: McpPreflight) -> List[Any]:
        return list((await pf.list_tools()).tools)

    pf, checked = await _checked(client, lock, server_name, mode, options, tools)
    return CheckedTools(
        [
        convert_mcp_tool_to_langchain_tool(
            None,
            tool,
            connection=connection,
            callbacks=getattr(client, "callbacks", None),
            tool_interceptors=getattr(client, "tool_interceptors", None),
            server_name=server_name,
            tool_name_prefix=bool(getattr(client, "tool_name_prefix", False)),
            handle_tool_errors=bool(getattr(client, "handle_tool_errors", True)),
        )
        for tool in checked
        ],
        pf.records,
    )


async def load_mcp_prompt_with_continuity(
    client: Any,
    lock: Lock,
    *,
    server_name: str,
    prompt_name: str,
    arguments: Optional[Dict[str, Any]] = None,
    mode: str | None = None,
    **options: Any,
) -> List[Any]:
    """``client.get_prompt``'s LangChain messages (langchain-mcp-adapters'
    load_mcp_prompt) of a prompt the continuity check lets through, asked
    of the checked session: a prompt the record withholds, or that the
    checked list does not offer, is ItemRefused and the server is not
    asked. The list carries the check's records (CheckedTools)."""

    async def prompt(pf: McpPreflight) -> List[Any]:
        return list(await load_mcp_prompt(pf, prompt_name, arguments=arguments))

    pf, messages = await _checked(client, lock, server_name, mode, options, prompt)
    return CheckedTools(messages, pf.records)


async def load_mcp_resources_with_continuity(
    client: Any,
    lock: Lock,
    *,
    server_name: str,
    uris: Union[str, List[str], None] = None,
    mode: str | None = None,
    **options: Any,
) -> List[Any]:
    """``client.get_resources``'s LangChain Blobs (langchain-mcp-adapters'
    load_mcp_resources) read through the checked session: without uris,
    the resources of the checked list the record lets through (each listed
    as the core wrote it); a URI the record does not hand over, or a ui://
    template that is not the one pinned, is ItemRefused (not the
    adapter's RuntimeError around it). The list carries the check's
    records (CheckedTools)."""

    async def resources(pf: McpPreflight) -> List[Any]:
        try:
            return list(await load_mcp_resources(pf, uris=uris))
        except RuntimeError as e:
            if isinstance(e.__cause__, ContinuityRefused):
                raise e.__cause__ from None
            raise

    pf, blobs = await _checked(client, lock, server_name, mode, options, resources)
    return CheckedTools(blobs, pf.records)

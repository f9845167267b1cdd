"""crawlcheck.langchain.load_mcp_tools_with_continuity: LangChain tools from
an MCP server (langchain-mcp-adapters' MultiServerMCPClient) that passed the
continuity check.

The check runs where the tools are fetched: a session of the client's own
(``client.session(server_name)``) is tapped before its handshake, every
``tools/list`` page is read and checked, and the tools returned are the
checked ones the record lets through, converted by langchain-mcp-adapters
as ``client.get_tools`` converts them (each call opens its own session, as
there). A session the record pauses or denies raises ContinuityRefused with
the record. Calls are not checked again: call this again to check again.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Union

from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool

from ._options import Options
from .preflight import CheckedTools, ContinuityRefused, Lock, McpPreflight

__all__ = ["load_mcp_tools_with_continuity"]


def _endpoint(connection: Dict[str, Any]) -> Union[str, List[str], None]:
    if connection.get("url"):
        return str(connection["url"])
    if connection.get("command"):
        return [str(connection["command"]), *[str(a) for a in connection.get("args") or []]]
    return None


async def load_mcp_tools_with_continuity(
    client: Any,
    lock: Lock,
    *,
    server_name: str,
    mode: str = "enforce",
    **options: Any,
) -> List[Any]:
    """The LangChain tools of ``server_name`` the continuity check lets
    through; options are McpPreflight's (log_path, on_record, policy, ...).
    ``options["on_preflight"]``, when given, is called with the McpPreflight
    (its record) before its session closes. The list returned carries the
    check's ``records`` and ``record`` (CheckedTools). A missing or bad
    lockfile is PreflightError, raised before any session is opened."""
    on_preflight = options.pop("on_preflight", None)
    connection: Dict[str, Any] = client.connections[server_name]
    opts = Options(**options)  # type: ignore[typeddict-item]
    refused: Optional[ContinuityRefused] = None
    checked: List[Any] = []
    # Made (the lockfile read and verified) before the session: an error in
    # it is PreflightError itself, not one inside the transport's task group.
    pf = McpPreflight(None, lock, endpoint=_endpoint(connection), mode=mode, **opts)
    async with client.session(server_name, auto_initialize=False) as session:
        pf.session = session
        try:
            await pf.attach(initialized=False)
            await pf.initialize()
            checked = list((await pf.list_tools()).tools)
        except ContinuityRefused as e:
            # Raised once the session is closed, not from inside the
            # transport's task group (which would wrap it in a group).
            refused = e
        finally:
            pf.close()
        if on_preflight is not None:
            on_preflight(pf)
    if refused is not None:
        raise refused
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



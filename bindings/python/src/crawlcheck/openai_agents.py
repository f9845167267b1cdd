"""crawlcheck.openai_agents.with_continuity: the continuity check on an
OpenAI Agents SDK MCP server (``agents.mcp.MCPServer``), at every
``list_tools``.

The wrapper is an MCPServer itself: the agent's tool list comes from the
pages the check read (the tools the model sees are the tools that were
compared), without the tools the record withholds; ``call_tool`` refuses a
withheld tool, or any tool of a paused or denied session, with
ContinuityRefused carrying the record. The Agents SDK turns a tool error into
a message for the model unless the server's failure_error_function says
otherwise. ``confirm(*names)`` re-approves, as McpPreflight.confirm.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Dict, List, Optional, Union

from agents.mcp import MCPServer, MCPServerStdio, MCPServerStreamableHttp

from ._errors import CrawlcheckError
from ._options import Options
from . import transport
from .preflight import MAX_KEPT_RECORDS, ContinuityRefused, Lock, McpPreflight, PreflightError, show

__all__ = ["ContinuityMCPServer", "ToolFilterRefused", "with_continuity"]


class ToolFilterRefused(CrawlcheckError):
    """A call of a tool the server's own ``tool_filter`` leaves out: the
    operator blocked it, so it is neither handed to the model nor called."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        super().__init__(f"crawlcheck: tool {show(tool)} refused: the server's tool_filter leaves it out")

_PASSED_ON = (
    "use_structured_content",
    "_needs_approval_policy",
    "_failure_error_function",
    "tool_meta_resolver",
    "custom_data_extractor",
    "tool_input_guardrails",
    "tool_output_guardrails",
)


def _endpoint(server: Any) -> Union[str, Any, None]:
    params = getattr(server, "params", None)
    if isinstance(params, dict) and params.get("url"):
        return str(params["url"])
    if isinstance(params, dict) and params.get("command"):
        return [str(params["command"]), *[str(a) for a in params.get("args") or []]]
    if params is not None and hasattr(params, "command"):
        return params
    return None


def _bound(server: MCPServer) -> None:
    """Puts the server's connections on crawlcheck.transport (issue 22, F9):
    every frame bounded by max_answer_bytes before it is decoded, and the
    wire's bytes handed to the check. The seam is the Agents SDK's own
    ``create_streams``, which opens the streams of each connection. A
    streamable HTTP server with its own ``httpx_client_factory`` keeps mcp's
    transport (the factory's client cannot carry the bound): its answers are
    bounded after decoding, as with mcp's transports anywhere."""
    if isinstance(server, MCPServerStdio):
        params = server.params
        server.create_streams = lambda: transport.stdio_client(params)  # type: ignore[method-assign]
    elif isinstance(server, MCPServerStreamableHttp) and server.params.get("httpx_client_factory") is None:
        p = server.params
        server.create_streams = lambda: transport.streamable_http_client(  # type: ignore[method-assign]
            str(p["url"]),
            headers=p.get("headers"),
            timeout=p.get("timeout", 5),
            sse_read_timeout=p.get("sse_read_timeout", 60 * 5),
            auth=p.get("auth"),
            terminate_on_close=p.get("terminate_on_close", True),
        )


class ContinuityMCPServer(MCPServer):
    """An MCPServer whose tool list passes the continuity check."""

    def __init__(self, server: MCPServer, lock: Lock, mode: str | None, options: Options) -> None:
        super().__init__()
        for name in _PASSED_ON:
            if hasattr(server, name):
                setattr(self, name, getattr(server, name))
        self.inner = server
        _bound(server)
        self._lock = lock
        self._mode = mode
        #: the records of every preflight this server had (one per
        #: connection), oldest first, the newest MAX_KEPT_RECORDS
        self._records: "deque[Dict[str, Any]]" = deque(maxlen=MAX_KEPT_RECORDS)
        on_record = options.get("on_record")

        def keep(rec: Dict[str, Any], raw: bytes) -> None:
            self._records.append(rec)
            if on_record is not None:
                on_record(rec, raw)

        self._options: Options = {**options, "on_record": keep}
        # The lockfile is read and verified now: a missing or bad one is
        # PreflightError from with_continuity itself. The first connection's
        # preflight is this one.
        self.preflight: Optional[McpPreflight] = self._new_preflight()
        #: names of the tools the last list_tools handed over after the
        #: server's tool_filter (None: no filter to keep)
        self._handed: Optional[set] = None  # type: ignore[type-arg]

    @property
    def name(self) -> str:
        return str(self.inner.name)

    async def connect(self) -> None:
        await self.inner.connect()  # type: ignore[no-untyped-call]

    async def cleanup(self) -> None:
        if self.preflight is not None:
            self.preflight.close()
            self.preflight = None
        await self.inner.cleanup()  # type: ignore[no-untyped-call]

    async def _preflight(self) -> McpPreflight:
        session = getattr(self.inner, "session", None)
        if session is None:
            raise PreflightError(f"crawlcheck: MCP server {self.inner.name!r} is not connected")
        if self.preflight is None or self.preflight.session is not session:
            # A new connection: the preflight made at wrapping, or a new one.
            pf = self.preflight if self.preflight is not None and self.preflight.session is None else self._new_preflight()
            pf.session = session
            await pf.attach(getattr(self.inner, "server_initialize_result", None))
            self.preflight = pf
        return self.preflight

    def _new_preflight(self) -> McpPreflight:
        """A preflight (its lockfile read and verified) for the next connection."""
        return McpPreflight(None, self._lock, endpoint=_endpoint(self.inner), mode=self._mode, **self._options)

    async def list_tools(self, run_context: Any = None, agent: Any = None) -> List[Any]:
        """Checks the server's tool list now and returns the tools the record
        lets through, then filtered by the server's own ``tool_filter`` (static
        or dynamic, as the Agents SDK applies it): a tool the operator blocked
        is not handed over, and ``call_tool`` refuses it."""
        pf = await self._preflight()
        await pf.recheck()
        tools = list((await pf.list_tools()).tools)
        if getattr(self.inner, "tool_filter", None) is not None:
            apply = getattr(self.inner, "_apply_tool_filter", None)
            if not callable(apply):
                raise PreflightError(f"crawlcheck: MCP server {self.inner.name!r} has a tool_filter this wrapper cannot apply")
            tools = list(await apply(tools, run_context, agent))
            self._handed = {t.name for t in tools}
        return tools

    async def call_tool(self, tool_name: str, arguments: Optional[Dict[str, Any]], meta: Optional[Dict[str, Any]] = None) -> Any:
        if getattr(self.inner, "tool_filter", None) is not None and tool_name not in (self._handed or set()):
            raise ToolFilterRefused(tool_name)
        pf = await self._preflight()
        rec, raw, _ = await pf._gate()
        if not pf._allowed(rec, tool_name):
            raise ContinuityRefused(rec, raw, tool=tool_name, effect=str((rec.get("tools") or {}).get(tool_name, "")))
        return await self.inner.call_tool(tool_name, arguments, meta)

    async def _checked(self) -> McpPreflight:
        """The preflight of this connection, checked once when no check was
        made on it yet (list_tools checks at each listing)."""
        pf = await self._preflight()
        if pf.record is None:
            await pf.recheck()
        return pf

    async def list_prompts(self) -> Any:
        """The prompts the record lets through, each as the core wrote it
        (McpPreflight.list_prompts; crawlcheck/_features.py), never the
        server's page as the SDK parsed it."""
        return await (await self._checked()).list_prompts()

    async def get_prompt(self, name: str, arguments: Optional[Dict[str, Any]] = None) -> Any:
        """Gets a prompt the record lets through; refuses any other with
        ItemRefused before the server is asked."""
        await (await self._checked())._allow("prompts", name)
        return await self.inner.get_prompt(name, arguments)

    async def list_resources(self, cursor: Optional[str] = None) -> Any:
        """The resources the record lets through, in one page."""
        return await (await self._checked()).list_resources(cursor=cursor)

    async def list_resource_templates(self, cursor: Optional[str] = None) -> Any:
        """The resource templates the record lets through, in one page."""
        return await (await self._checked()).list_resource_templates(cursor=cursor)

    async def read_resource(self, uri: str) -> Any:
        """Reads a resource the record lets through, or a ui:// template a
        handed tool names once the core finds it the one pinned
        (McpPreflight.read_resource); refuses any other with ItemRefused."""
        pf = await self._checked()
        if str(uri).startswith("ui://"):
            return await pf.read_resource(uri)
        await pf._allow("resources", str(uri))
        return await self.inner.read_resource(uri)

    async def confirm(self, *names: str) -> Dict[str, Any]:
        """Re-approves the named tools (McpPreflight.confirm)."""
        return await (await self._preflight()).confirm(*names)

    async def confirm_instructions(self, *names: str) -> Dict[str, Any]:
        """Re-approves the named tools and the server's changed instructions
        (McpPreflight.confirm_instructions)."""
        return await (await self._preflight()).confirm_instructions(*names)

    async def confirm_features(self, *names: str) -> Dict[str, Any]:
        """Re-approves the named tools and the prompts, resources and
        templates as offered now (McpPreflight.confirm_features)."""
        return await (await self._preflight()).confirm_features(*names)

    @property
    def record(self) -> Optional[Dict[str, Any]]:
        """The newest record; None before the first check."""
        return self._records[-1] if self._records else None

    @property
    def records(self) -> List[Dict[str, Any]]:
        """The records of this server's checks, over every connection, oldest
        first (MAX_KEPT_RECORDS at most; the log holds every one)."""
        return list(self._records)


def with_continuity(server: MCPServer, lock: Lock, mode: str | None = None, **options: Any) -> ContinuityMCPServer:
    """Wraps an Agents SDK MCP server (connected or not) in the continuity
    check; options are McpPreflight's (log_path, on_record, policy, ...)."""
    return ContinuityMCPServer(server, lock, mode, Options(**options))  # type: ignore[typeddict-item]

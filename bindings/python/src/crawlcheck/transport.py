"""Transports of the package's own under mcp's ClientSession, for stdio and
streamable HTTP (mcp 1.x and 2.x), that bound every frame before it is
decoded and hand the preflight the bytes of each frame as they crossed the
wire (issue 22, F9 and F12)::

    from crawlcheck.transport import stdio_client, streamable_http_client

    async with stdio_client(params) as (read, write):
        async with with_preflight(ClientSession(read, write), lock, endpoint=params) as s:
            await s.initialize()

mcp's own transports read and decode a whole answer (an HTTP body, an SSE
event, a stdio line) before anything above them sees it: a 600 MiB body
becomes gigabytes of Python objects before max_answer_bytes can apply, and
what decoding loses (a repeated key, a number's spelling) never reaches the
core. These read the server's bytes themselves and, as the Go preflight's
transport does, split them into frames at the same places (a stdio line; a
2xx HTTP body; the data of one SSE event), refusing a frame past the limit
before holding more of it: the read stream ends there (stdio) or the body is
closed (HTTP), and the check records ``answer_too_large``. Each frame is then
decoded by mcp's own message type for the session, so the session behaves as
on mcp's transports.

Over HTTP the framing (session id, SSE resumption, GET stream) stays mcp's:
its ``streamable_http_client`` runs on an HTTP client whose transport is
this module's, which asks for identity encoding (a compressed body would be
bounded by its compressed size) and bounds each body as it is read.
"""

from __future__ import annotations

import codecs
import inspect
import subprocess
import sys
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable, List, Optional, TextIO, Tuple

import anyio

from ._frames import members, value
from ._limits import limits
from .ops import resource_metadata as _resource_metadata_op

if sys.version_info < (3, 11):  # pragma: no cover - the backport anyio depends on there
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found]

__all__ = ["Wire", "stdio_client", "streamable_http_client"]

#: How much of a stdio child's stderr is kept, its end, for the record of a
#: child that exits before answering (the Go and JS hosts keep as much).
_STDERR_TAIL_BYTES = 4096

#: How long a child that closed its stdout is waited for, for its exit
#: status and the end of its stderr.
_EXIT_WAIT = 1.0

#: How long the server may take to exit once its stdin is closed, then after
#: SIGTERM, before it is killed (the stdio transport's shutdown).
_TERMINATE_WAIT = 2.0


class Wire:
    """What a transport of this module tells the preflight's tap: each frame
    as it crossed the wire (``on_frame(frame, to)``, to the id of the HTTP
    request whose answer it is, when the transport knows it) and a frame past
    ``limit`` (``on_too_large()``, after which nothing more of it is read)."""

    def __init__(self, limit: int = 0) -> None:
        # Until a preflight sets its own: the core's (limits.answer_bytes).
        self.limit = limit if limit > 0 else limits()["answer_bytes"]
        self.on_frame: Optional[Callable[[bytes, Optional[str]], None]] = None
        self.on_too_large: Optional[Callable[[], None]] = None
        #: the first fault the transport itself saw ("connect_refused",
        #: "process_exited"), "" if none: the fact the preflight classifies
        #: a failure by, never an exception's text (docs/continuity.md,
        #: Host faults)
        self.fault = ""
        #: with an auth fault ("unauthorized", "forbidden"): the resource
        #: metadata URL its WWW-Authenticate named, "" for none
        self.resource_metadata = ""
        #: stdio lines that were no JSON-RPC message, skipped (starts_message)
        self.stray_lines = 0
        #: the program a command_not_found could not find
        self.command = ""
        #: the stdio child's exit status once it exited (not by a signal)
        self.exit_status: Optional[int] = None
        #: the end of the stdio child's stderr (_STDERR_TAIL_BYTES at most)
        self.stderr = bytearray()

    def stderr_chunk(self, chunk: bytes) -> None:
        """Keeps the end of the child's stderr."""
        self.stderr += chunk
        del self.stderr[: max(0, len(self.stderr) - _STDERR_TAIL_BYTES)]

    def stderr_tail(self) -> str:
        """The end of the child's stderr as text (bytes that are not UTF-8
        shown as U+FFFD: display text, never hashed)."""
        return bytes(self.stderr).decode("utf-8", "replace")

    def saw(self, fault: str) -> None:
        """Records a fault of the transport; the first is kept."""
        if not self.fault:
            self.fault = fault

    def saw_auth(self, fault: str, resource_metadata: str) -> None:
        """Records an HTTP 401 or 403 ("unauthorized", "forbidden") and the
        resource metadata URL its WWW-Authenticate named, as the Go capture
        does: the header is read for that URL only, so no credential of a
        challenge reaches a record. The first fault is kept."""
        if not self.fault:
            self.fault, self.resource_metadata = fault, resource_metadata

    def frame(self, frame: bytes, to: Optional[str] = None) -> None:
        if self.on_frame is not None:
            self.on_frame(frame, to)

    def too_large(self) -> None:
        if self.on_too_large is not None:
            self.on_too_large()


class WireReceiveStream:
    """The read stream a transport of this module yields: the memory stream
    the session reads, carrying the Wire the preflight finds it by."""

    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner = inner
        self.crawlcheck_wire = wire

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        return await self._inner.receive()

    def __aiter__(self) -> "WireReceiveStream":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> "WireReceiveStream":
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


def wire_of(stream: Any) -> Optional[Wire]:
    """The Wire of a stream this module made (through wrappers), or None."""
    s, seen = stream, 0
    while s is not None and seen < 8:
        w = getattr(s, "__dict__", {}).get("crawlcheck_wire")
        if isinstance(w, Wire):
            return w
        s, seen = getattr(s, "_inner", None), seen + 1
    return None


def raise_lone(group: "BaseExceptionGroup[BaseException]") -> None:
    """Raises the one exception a transport's task group wrapped, when it
    wrapped one and cancellations only: what the body raised (with_preflight's
    PreflightError for a missing lockfile) comes out as itself."""
    leaves: List[BaseException] = []

    def walk(e: BaseException) -> None:
        if isinstance(e, BaseExceptionGroup):
            for x in e.exceptions:
                walk(x)
        elif not isinstance(e, anyio.get_cancelled_exc_class()):
            leaves.append(e)

    walk(group)
    if len(leaves) == 1:
        raise leaves[0].with_traceback(leaves[0].__traceback__) from leaves[0].__cause__


def is_transport(x: Any) -> bool:
    """Whether with_preflight was handed a transport's (unentered) context
    manager — mcp's or crawlcheck.transport's ``stdio_client(params)``,
    ``streamable_http_client(url)`` — rather than a ClientSession."""
    t = type(x)  # the class only: a session is not touched before the lockfile is judged
    return hasattr(t, "__aenter__") and not hasattr(t, "initialize") and not hasattr(t, "call_tool")


async def unwrapped(aw: Awaitable[Any]) -> Any:
    """Awaits aw; an exception group of one exception (and cancellations)
    that anyio's task groups made of it is raised as that exception."""
    try:
        return await aw
    except BaseExceptionGroup as group:
        raise_lone(group)
        raise


def starts_message(frame: bytes) -> bool:
    """Whether a stdio line, blanks trimmed, can be a JSON-RPC message: it
    opens an object, or a batch ("[" whose next byte after blanks is "{" or
    "]"). Any other line is a stray line (docs/mcpserver.md, Stray lines),
    skipped and counted; one that starts as a message stays a frame,
    malformed or not. The Go and JS captures skip by the same rule."""
    if frame[:1] == b"{":
        return True
    if frame[:1] != b"[":
        return False
    rest = frame[1:].lstrip(b" \t\r")
    return rest[:1] in (b"{", b"]")


def _decode(frame: bytes) -> Any:
    """A frame as the session receives it: mcp's SessionMessage of its own
    message type, or the parse error as a value (as mcp's transports hand it)."""
    from mcp import types
    from mcp.shared.message import SessionMessage

    try:
        adapter = getattr(types, "jsonrpc_message_adapter", None)
        if adapter is not None:  # mcp 2.x
            return SessionMessage(adapter.validate_json(frame, by_name=False))
        return SessionMessage(types.JSONRPCMessage.model_validate_json(frame))  # type: ignore[attr-defined]
    except ValueError as e:
        return e


def _encode(message: Any) -> bytes:
    """A message as mcp's own stdio transport writes it (per major)."""
    from mcp import types

    if hasattr(types, "jsonrpc_message_adapter"):  # mcp 2.x
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")  # type: ignore[no-any-return]
    return message.model_dump_json(by_alias=True, exclude_none=True).encode("utf-8")  # type: ignore[no-any-return]


# --- stdio -------------------------------------------------------------------


@asynccontextmanager
async def stdio_client(server: Any, errlog: TextIO = sys.stderr) -> AsyncIterator[Tuple[Any, Any]]:
    """Starts the server of a StdioServerParameters and yields the (read,
    write) streams of newline-delimited JSON-RPC on its stdio, as mcp's
    ``stdio_client`` does; each line is bounded before it is decoded, and a
    line that is not UTF-8 or not JSON reaches the session as a parse error
    without ending the transport."""
    from mcp.client.stdio import get_default_environment

    wire = Wire()
    env = dict(get_default_environment())
    env.update(getattr(server, "env", None) or {})
    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[Any](0)
    try:
        process = await anyio.open_process(
            [str(server.command), *[str(a) for a in (server.args or [])]],
            env=env,
            # Relayed to errlog by relay_stderr, its end kept for the record.
            stderr=subprocess.PIPE,
            cwd=getattr(server, "cwd", None),
            start_new_session=True,
        )
    except OSError as e:
        # The command did not start: the session is one whose read stream
        # ends at once, so a preflight records connect_refused (or, for no
        # program of that name, command_not_found), as the Go and JS
        # preflights do, instead of no record at all.
        if isinstance(e, FileNotFoundError):
            wire.command = str(server.command)
            wire.saw("command_not_found")
        else:
            wire.saw("connect_refused")
        read_writer.close()

        async def discard() -> None:
            async with write_reader:
                async for _ in write_reader:
                    pass

        async with anyio.create_task_group() as tg:
            tg.start_soon(discard)
            try:
                yield WireReceiveStream(read_stream, wire), write_stream
            finally:
                read_stream.close()
                write_stream.close()
        return

    async def deliver(line: bytes) -> None:
        frame = line.strip(b" \t\r\n")
        if not frame:
            return
        if not starts_message(frame):
            # A banner or a log line: skipped, as mcp's own stdio_client
            # skips a line it cannot parse, and counted for the record.
            wire.stray_lines += 1
            return
        wire.frame(frame)
        await read_writer.send(_decode(frame))

    async def note_exit() -> None:
        # The exited child's status and the end of its stderr, before the
        # session hears of the end (bounded: a child that closed its pipes
        # and lives on is not waited for).
        with anyio.move_on_after(_EXIT_WAIT):
            await process.wait()
            await stderr_done.wait()
        if process.returncode is not None and process.returncode >= 0:
            wire.exit_status = process.returncode

    async def reader() -> None:
        assert process.stdout is not None
        buf = bytearray()
        async with read_writer:
            try:
                while True:
                    chunk = await process.stdout.receive(1 << 16)
                    start = 0
                    while (nl := chunk.find(b"\n", start)) >= 0:
                        buf += chunk[start:nl]
                        if len(buf) > wire.limit:
                            break
                        line, buf = bytes(buf), bytearray()
                        await deliver(line)
                        start = nl + 1
                    else:
                        buf += chunk[start:]
                    if len(buf) > wire.limit:
                        # A line past the limit: neither this reader nor the
                        # session holds more of it; the read stream ends.
                        wire.too_large()
                        return
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                # The child closed its stdout: it exited, or will.
                wire.saw("process_exited")
                if buf:
                    await deliver(bytes(buf))
                await note_exit()

    stderr_done = anyio.Event()

    async def relay_stderr() -> None:
        # The child's stderr goes to errlog as it comes, as mcp's
        # stdio_client sends it there; its end is kept for the record.
        assert process.stderr is not None
        decode = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            async for chunk in process.stderr:
                wire.stderr_chunk(chunk)
                try:
                    errlog.write(decode.decode(chunk))
                    errlog.flush()
                except (OSError, ValueError):
                    pass
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            stderr_done.set()

    async def writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for item in write_reader:
                    await process.stdin.send(_encode(item.message) + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            wire.saw("process_exited")  # a write to a child that is gone
            # The reader may not have seen the end yet: the session hears
            # of it now, so the exit status is read here too.
            await note_exit()
            await read_writer.aclose()

    async def shutdown() -> None:
        # The stdio transport's shutdown: close stdin, wait, SIGTERM, wait, SIGKILL.
        if process.stdin is not None:
            try:
                await process.stdin.aclose()
            except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
        for signal in (None, "terminate", "kill"):
            if signal == "terminate":
                process.terminate()
            elif signal == "kill":
                process.kill()
            with anyio.move_on_after(_TERMINATE_WAIT):
                await process.wait()
            if process.returncode is not None:
                break
        await process.aclose()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            tg.start_soon(relay_stderr)
            try:
                yield WireReceiveStream(read_stream, wire), write_stream
            finally:
                with anyio.CancelScope(shield=True):
                    read_stream.close()
                    write_stream.close()
                    try:
                        await shutdown()
                    except ProcessLookupError:
                        pass
                tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        raise_lone(group)
        raise


# --- streamable HTTP -----------------------------------------------------------


#: The longest resource metadata URL kept (bytes), as the Go host bounds it:
#: a longer one is noise, not a URL a person follows.
def resource_metadata_of(headers: List[bytes]) -> str:
    """The resource_metadata parameter (RFC 9728) of a 401's or 403's
    WWW-Authenticate lines, "" when none is kept: the core's rule (its
    resource_metadata op, the same for every host), handed the lines as the
    server sent them (bytes that are not UTF-8 read as U+FFFD)."""
    lines = [line.decode("utf-8", "replace") for line in headers]
    return _resource_metadata_op(www_authenticate=lines)["resource_metadata"]


def _httpx() -> Any:
    """The HTTP client package mcp's streamable HTTP transport uses (httpx
    on 1.x, httpx2 on 2.x)."""
    from mcp.client import streamable_http as sh

    return getattr(sh, "httpx2", None) or getattr(sh, "httpx")


def _request_id(body: bytes) -> Optional[str]:
    """The id of the one request a POST body carries (the key the tap knows
    its calls by), or None."""
    m, _ = members(body)
    if m is None or "method" not in m:
        return None
    v = value(m.get("id"))
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else None


def _too_large_error(hx: Any, limit: int) -> Exception:
    """The error a body past the limit ends with: a StreamError of the
    client's package, the kind both mcp majors turn into an error for the
    request instead of letting it out of the transport's task group."""

    class AnswerTooLarge(hx.StreamError):  # type: ignore[misc]
        pass

    return AnswerTooLarge(f"crawlcheck: the server sent an answer of more than {limit} bytes: not read further")


class _Body:
    """A response body read through the limit: a JSON body is one frame, an
    event stream one frame per event the SDK routes (as the Go preflight's
    bodyTap and sseTap split them): an event whose data is not empty and
    whose type is absent or "message". Both mcp majors hand up only
    events of type "message" (the SSE default when none is given); an
    event of another type never reaches ClientSession, so its data is no
    frame of the record either."""

    def __init__(self, hx: Any, inner: Any, wire: Wire, sse: bool, to: Optional[str]) -> None:
        self._hx = hx
        self._inner = inner
        self._wire = wire
        self._sse = sse
        self._to = to
        self._buf = bytearray()
        self._data: List[bytes] = []
        #: the event type of the event being read, None when none is given
        self._type: Optional[bytes] = None
        self._size = 0

    def _too_large(self) -> Exception:
        self._buf, self._data, self._type = bytearray(), [], None
        self._wire.too_large()
        return _too_large_error(self._hx, self._wire.limit)

    def _feed(self, chunk: bytes) -> None:
        if not self._sse:
            if len(self._buf) + len(chunk) > self._wire.limit:
                raise self._too_large()
            self._buf += chunk
            return
        self._size += len(chunk)
        if self._size > self._wire.limit:
            raise self._too_large()
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                break
            self._buf += chunk[start:nl]
            line = bytes(self._buf)
            self._buf = bytearray()
            self._line(line[:-1] if line.endswith(b"\r") else line)
            start = nl + 1
        self._buf += chunk[start:]

    def _line(self, line: bytes) -> None:
        if not line:
            data = b"\n".join(self._data)
            if data and self._type in (None, b"message"):
                self._wire.frame(data, self._to)
            self._data, self._type = [], None
            self._size = 0
            return
        # A field is the text before the first colon (the whole line without
        # one), its value what follows less one leading space; a line
        # starting with a colon is a comment (no field of ours).
        field, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            self._data.append(value)
        elif field == b"event":
            self._type = value or None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._feed(bytes(chunk))
            yield chunk
        if not self._sse:
            frame = bytes(self._buf).strip(b" \t\r\n")
            self._buf = bytearray()
            if frame:
                self._wire.frame(frame, self._to)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _bounded_transport(hx: Any, wire: Wire) -> Any:
    """An HTTP transport of the client's package that bounds every 2xx body."""

    class Body(_Body, hx.AsyncByteStream):  # type: ignore[misc]
        """The package's own byte stream type, which its client requires."""

    class Bounded(hx.AsyncBaseTransport):  # type: ignore[misc]
        def __init__(self) -> None:
            self._inner = hx.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            to = None
            if request.method == "POST":
                to = _request_id(bytes(request.content))
            request.headers["Accept-Encoding"] = "identity"
            try:
                resp = await self._inner.handle_async_request(request)
            except hx.ConnectError:
                wire.saw("connect_refused")  # no connection was made
                raise
            if resp.status_code in (401, 403):
                challenges = [v for k, v in resp.headers.raw if k.lower() == b"www-authenticate"]
                wire.saw_auth("unauthorized" if resp.status_code == 401 else "forbidden", resource_metadata_of(challenges))
            if resp.status_code // 100 != 2:
                return resp
            encoding = resp.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                await resp.aclose()
                raise hx.DecodingError(f"crawlcheck: the server sent a {encoding} body, asked for identity")
            sse = resp.headers.get("content-type", "").split(";")[0].strip().lower() == "text/event-stream"
            length = resp.headers.get("content-length", "")
            if not sse and length.isdigit() and int(length) > wire.limit:
                await resp.aclose()
                wire.too_large()
                raise _too_large_error(hx, wire.limit)
            return hx.Response(
                resp.status_code,
                headers=resp.headers,
                stream=Body(hx, resp.stream, wire, sse, to),
                extensions=resp.extensions,
                request=request,
            )

        async def aclose(self) -> None:
            await self._inner.aclose()

    return Bounded()


def _seconds(value: Any, default: float) -> float:
    """Seconds of a timeout given as a number or a timedelta; default for None."""
    if value is None:
        return default
    return float(value.total_seconds() if hasattr(value, "total_seconds") else value)


@asynccontextmanager
async def streamable_http_client(
    url: str,
    *,
    headers: Optional[dict] = None,  # type: ignore[type-arg]
    timeout: Any = None,
    auth: Any = None,
    terminate_on_close: bool = True,
    sse_read_timeout: Any = None,
) -> AsyncIterator[Tuple[Any, ...]]:
    """mcp's ``streamable_http_client`` on an HTTP client whose every
    response body is bounded and framed here; yields what it yields, the
    read stream carrying the Wire. ``timeout`` is the HTTP client's (an
    httpx Timeout, or seconds or a timedelta, with ``sse_read_timeout`` the
    read timeout of an event stream, as the frameworks' connection settings
    give them)."""
    from mcp.client import streamable_http as sh

    hx = _httpx()
    try:
        from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT
    except ImportError:  # pragma: no cover - the constants of both majors
        MCP_DEFAULT_TIMEOUT, MCP_DEFAULT_SSE_READ_TIMEOUT = 30.0, 300.0
    wire = Wire()
    if not isinstance(timeout, hx.Timeout):
        timeout = hx.Timeout(_seconds(timeout, MCP_DEFAULT_TIMEOUT), read=_seconds(sse_read_timeout, MCP_DEFAULT_SSE_READ_TIMEOUT))
    kw: dict = {"timeout": timeout}  # type: ignore[type-arg]
    if headers is not None:
        kw["headers"] = headers
    if auth is not None:
        kw["auth"] = auth
    try:
        async with hx.AsyncClient(transport=_bounded_transport(hx, wire), **kw) as client:
            extra: dict = {}  # type: ignore[type-arg]
            if "max_sse_event_size" in inspect.signature(sh.streamable_http_client).parameters:
                # mcp 2.x's own bound on an event (1 MiB) would refuse first, and
                # differently from the Go preflight: the Wire's limit is the one.
                extra["max_sse_event_size"] = None
            async with sh.streamable_http_client(url, http_client=client, terminate_on_close=terminate_on_close, **extra) as streams:
                yield (WireReceiveStream(streams[0], wire), *streams[1:])
    except BaseExceptionGroup as group:
        raise_lone(group)
        raise

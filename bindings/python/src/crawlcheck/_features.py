"""Prompts, resources, resource templates and MCP Apps UI templates (issue
35): what a server offers beside its tools, read at each check and handed
over as the tools are.

At a check, after a whole tool list, the preflight reads the lists the
server's capabilities declare (``prompts/list``, ``resources/list``,
``resources/templates/list``, each followed by the core's ``next_page`` as
tools/list is) and the ui:// templates the core names from the tool pages
(``ui_templates``, read with ``resources/read``), each answer taken by the
tap below the SDK's types, and hands them to the check as
``observed.features`` (as the Go preflight's internal/preflight/features.go
reads them). A fault ends the reading there: the list it hit says so and
what was not read is not handed (the record says it was not compared).

After the check, ``list_prompts``, ``list_resources`` and
``list_resource_templates`` answer from the core's handoff (its
``features``: each item the JSON text the core wrote from what it hashed,
parsed by the SDK's own type; never the SDK's parse of a page), and
``get_prompt`` / ``read_resource`` refuse anything the handoff does not hand
over with ItemRefused, in the core's words (``refusal`` with ``item``). A
ui:// template is read when asked for, checked against the lockfile's pin
by the core (``ui_template_check``) and handed over only when it is the one
approved. The Go twin is internal/preflight/session_features.go.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, cast

import anyio

from ._core import CoreError
from ._entry import ContinuityRefused, PreflightError, show
from ._errors import CrawlcheckError
from ._limits import limits
from ._observation import FAULT_PAGES_OVER_CAP, FAULT_TIMEOUT, Observation, _members
from .ops import next_page, refusal, ui_template_check, ui_templates

if TYPE_CHECKING:
    from .preflight import McpPreflight

#: The lists read beside tools/list: the record's name of each, its method,
#: and the server capability that declares it (MCP forbids asking for a
#: list the server does not declare).
LISTS: Tuple[Tuple[str, str, str], ...] = (
    ("prompts", "prompts/list", "prompts"),
    ("resources", "resources/list", "resources"),
    ("resource_templates", "resources/templates/list", "resources"),
)
METHOD_READ = "resources/read"


class ItemRefused(ContinuityRefused):
    """A prompt, resource, resource template or ui:// template the record
    does not let through: withheld (``effect`` set), not in the checked
    list, of a list the check did not compare (``not_compared``: the
    lockfile pins none of it), or a ui:// template that is not the one
    approved or that no tool handed over names. ``list`` is ``prompts``,
    ``resources``, ``resource_templates`` or ``ui_templates``; ``item`` the
    name, uri or uriTemplate asked for (None for a whole list). For a ui://
    template, ``parts`` are the parts ``ui_template_check`` answered differ
    from the pin, or, without them, ``reason`` says why it was refused
    (``not_named``: no tool handed over names it; or ``ui_template_check``'s
    reason). The message is the core's (the session engine's refusal of a
    prompts/get or resources/read, ``refusal`` with ``item`` otherwise), as
    a withheld tool's is: the bytes Go's ItemRefusedError and JavaScript's
    ItemRefused carry."""

    def __init__(
        self,
        record: Dict[str, Any],
        record_raw: bytes,
        list: str,
        item: Optional[str],
        parts: Optional[Sequence[str]] = None,
        reason: Optional[str] = None,
        text: Optional[str] = None,
    ) -> None:
        self.record = record
        self.record_raw = record_raw
        self.tool = None
        self.list = list
        self.item = item
        compared = (record.get("features") or {}).get(list) if list != "ui_templates" else None
        self.not_compared = list != "ui_templates" and compared is None
        self.effect = str(compared.get(item, "")) if isinstance(compared, dict) and item is not None else ""
        self.parts = [str(p) for p in parts or []]
        self.reason = reason
        # A listing refused names no key: the whole list is.
        asked: Dict[str, Any] = {"list": list}
        if item is not None:
            asked["key"] = item
        if self.parts:
            asked["parts"] = self.parts
        elif reason is not None:
            asked["reason"] = reason
        try:
            # The session engine's words when it refused (text), else the
            # refusal op's: the same bytes.
            msg = text if text is not None else str(refusal(record=record_raw, item=asked)["text"])
        except CoreError:
            # A record the core cannot read (never one it wrote): the bare facts.
            msg = f"crawlcheck: refused: {list} {show(str(item))} (record {record.get('record_sha256', '')})"
        CrawlcheckError.__init__(self, msg)


def _capabilities(handshake_result: Any) -> Optional[Dict[str, Any]]:
    """The capabilities the server's handshake answer declares (its bytes as
    handed to the core); None when they cannot be read: then no list is
    read, and the record says they were not compared."""
    if handshake_result is None:
        return None
    raw = handshake_result.encode("utf-8") if isinstance(handshake_result, str) else bytes(handshake_result)
    result = _members(raw)
    caps = result.get("capabilities") if result is not None else None
    return caps if isinstance(caps, dict) else None


async def observe_features(pf: "McpPreflight", obs: Observation, seen: int, deadline: float) -> None:
    """Reads, after a whole tool list and before deadline, the lists the
    server declares and the ui:// templates the tool pages name, into
    ``obs.features``. The transport ending under it is recorded as the
    tool list's walk records it: the check is made (shielded) and the
    cancellation goes on."""
    from mcp import types

    caps = _capabilities(obs.handshake_result)
    if caps is None:
        return
    features: Dict[str, Any] = {}
    obs.features = features
    current: Dict[str, Any] = {}
    try:
        with anyio.fail_after(max(0.0, deadline - anyio.current_time())):
            for name, method, cap in LISTS:
                if caps.get(cap) is None:
                    features[name] = {"declared": False}
                    continue
                current = features[name] = {"pages": []}
                if not await _walk(pf, method, current, types):
                    return
            try:
                uris = ui_templates(pages=obs.pages)["uris"]
            except CoreError:
                # The core refuses the tool list, which the check records:
                # no template is read.
                return
            read: List[Dict[str, Any]] = []
            features["ui_templates"] = read
            for uri in uris:
                current = {"uri": uri}
                read.append(current)
                page, failure = await _fetch(pf, METHOD_READ, lambda u=uri: pf.session.read_resource(u), uri)
                if failure:
                    # The session is gone (or the deadline passed): the rest
                    # is not read, and the check withholds the tools naming them.
                    current["failure"] = failure
                    return
                current["result"] = page
    except TimeoutError:
        _failed(current, FAULT_TIMEOUT)
    except anyio.get_cancelled_exc_class():
        if not pf._tap.ended:
            raise
        _failed(current, pf._tap.fault()[0])
        with anyio.CancelScope(shield=True):
            await pf._settle(obs, seen)
        raise


def _failed(entry: Dict[str, Any], failure: str) -> None:
    """Marks the list or template being read as ended by failure."""
    if "uri" in entry:
        entry.pop("result", None)
    entry["failure"] = failure


async def _fetch(pf: "McpPreflight", method: str, send: Any, uri: Optional[str] = None) -> Tuple[Optional[bytes], str]:
    """One request of method through the SDK, its answer taken by the tap
    (McpPreflight._fetch_page with the tap reading method); uri, the ui://
    template read to be checked, passes the item gate."""
    pf._tap.reading, pf._tap.reading_uri = method, uri
    try:
        page, failure, _ = await pf._fetch_page(None, send)
    finally:
        pf._fetched()
        pf._tap.reading, pf._tap.reading_uri = None, None
    return page, failure


async def _walk(pf: "McpPreflight", method: str, entry: Dict[str, Any], types: Any) -> bool:
    """Reads every page of one list into entry, following nextCursor by the
    core's next_page (with its list) within the pages' byte bound; False
    when a fault ended it (entry's failure says which)."""
    max_bytes, total = limits()["pages_bytes"], 0
    followed: List[str] = []
    cursor: Optional[str] = None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor)
        sender = {
            "prompts/list": lambda: pf.session.list_prompts(params=params),
            "resources/list": lambda: pf.session.list_resources(params=params),
            "resources/templates/list": lambda: pf.session.list_resource_templates(params=params),
        }[method]
        page, failure = await _fetch(pf, method, sender)
        if failure:
            entry["failure"] = failure
            return False
        assert page is not None
        total += len(page)
        if total > max_bytes:
            # The pages dropped, as the Go preflight drops them.
            entry["pages"], entry["failure"] = [], FAULT_PAGES_OVER_CAP
            return False
        entry["pages"].append(page)
        try:
            step = next_page(list=method, page=page, followed=followed, page_cap=pf.page_cap)
        except CoreError:
            # The walk ends; the check reads why from the pages themselves.
            return True
        if step["cursor"] is None:
            if step["page_cap_reached"]:
                entry["page_cap_reached"] = True
            return True
        followed, cursor = step["followed"], step["cursor"]


def _items(types: Any, cls: Any, handed: Mapping[str, Any], key: str) -> List[Any]:
    """The handed objects parsed by the SDK's own type, from the core's
    text; one the type cannot hold, or whose key the type reads otherwise
    (mcp 1.x's AnyUrl normalising a uri), is left out rather than handed
    over changed."""
    out = []
    for it in handed.get("items") or []:
        try:
            v = cls.model_validate_json(it["item"])
        except Exception:  # noqa: BLE001 - pydantic's error: the SDK cannot hold it
            continue
        if v.model_dump(by_alias=True, mode="json").get(key) == it["key"]:
            out.append(v)
    return out


def _no_cursor(args: Tuple[Any, ...], params: Any, cursor: Optional[str]) -> None:
    given = cursor or (args[0] if args else None) or getattr(params, "cursor", None)
    if given:
        # A cursor is a server's string handed back: shown by the core's rule.
        raise ValueError(f"crawlcheck: unknown cursor {show(str(given))}: the preflight answers in one page")


class FeaturesMixin:
    """McpPreflight's prompts, resources and resource templates: the SDK's
    methods of the same names, answered from the core's handoff."""

    async def confirm_features(self, *names: str) -> Dict[str, Any]:
        """confirm that also approves the prompts, resources, resource
        templates and ui:// templates as offered now (the core's
        ``approve_features``): a person was shown each changed item, escaped
        (``crawlcheck.escape_text``), with its scan, and approved them with
        the tools named. The core pins the lists the record's observation
        read (one it did not read keeps its pin) and decides what is
        approved; a change of the instructions stays confirm_instructions'.
        Returns the record of the check against the new lockfile."""
        return await cast("McpPreflight", self)._confirm(list(names), False, True)

    async def _handed_list(self, list: str) -> Dict[str, Any]:
        """The handoff's list, for a listing, or ItemRefused of the whole
        list when the check did not compare it."""
        pf = cast("McpPreflight", self)
        rec, raw, _ = await pf._gate()
        lists = pf._handoff(rec).get("features") or {}
        if list not in lists:
            raise ItemRefused(rec, raw, list, None)
        return cast(Dict[str, Any], lists[list])

    async def _allow(self, list: str, key: Any, method: Optional[str] = None) -> None:
        """Returns when the session engine allows a prompts/get (list
        ``prompts``) of the prompt named key, or a resources/read
        (``resources``) of the resource whose uri is key, or a
        completion/complete (method) of either a prompt or a resource
        template or resource (``resource_templates``, its uriTemplate or a
        resource's uri) — its call event, judged as a tools/call is, by the
        newest record; ItemRefused in its words when not, of the item its
        refuse action names (a completion's uri may be a withheld
        resource's, not a template's), or ContinuityRefused when the action
        names none (the session does not proceed). list only says which
        member and method the event has."""
        pf = cast("McpPreflight", self)
        param = "name" if list == "prompts" else "uri"
        if method is None:
            method = "prompts/get" if list == "prompts" else "resources/read"
        if not isinstance(key, str):
            raise TypeError(f"crawlcheck: a {method} whose {param} is not a string names nothing")
        await pf._gate()
        a = pf._step({"type": "call", "method": method, param: key})[0]
        if a["action"] == "allow":
            return
        # The engine judged by the newest record: the error names it.
        rec, raw = pf._current()
        if "list" not in a:
            raise ContinuityRefused(rec, raw, effect=str(rec.get("effect")))
        raise ItemRefused(rec, raw, str(a["list"]), str(a["key"]), text=str(a["text"]))

    async def _admit_item(self, method: str, params: Any) -> None:
        """The item gate at the wire (``_Tap.gate_send``): a prompts/get or
        resources/read that did not come through get_prompt / read_resource
        (``send_request``, the session reached past the wrapper) leaves only
        for what the handoff hands over; a ui:// template only through
        read_resource, which checks it against its pin. A
        completion/complete (``complete``, however sent) leaves only when
        the engine allows the prompt (ref/prompt) or resource template or
        resource (ref/resource) its ref names, as the gateway's does; a ref of
        neither form is a TypeError, never sent."""
        if method == "completion/complete":
            ref = params.get("ref") if isinstance(params, dict) else getattr(params, "ref", None)
            kind, name, uri = ((ref.get(k) if isinstance(ref, dict) else getattr(ref, k, None)) for k in ("type", "name", "uri"))
            if kind == "ref/prompt":
                await self._allow("prompts", name, method)
            elif kind == "ref/resource":
                await self._allow("resource_templates", uri, method)
            else:
                raise TypeError("crawlcheck: a completion/complete names no prompt (ref/prompt) or resource template (ref/resource)")
            return
        key = params.get("name" if method == "prompts/get" else "uri") if isinstance(params, dict) else getattr(params, "name" if method == "prompts/get" else "uri", None)
        if method == "prompts/get":
            await self._allow("prompts", key)
        elif str(key).startswith("ui://"):
            raise PreflightError(f"crawlcheck: UI template {show(str(key))}: read it with read_resource, which checks it against the lockfile's pin")
        else:
            await self._allow("resources", str(key))

    async def list_prompts(self, *args: Any, params: Any = None, cursor: Optional[str] = None) -> Any:
        """The prompts of the checked list the record lets through, in one
        result without a cursor, each as the core wrote it. Against a
        lockfile that pins no prompts: ItemRefused (not_compared)."""
        from mcp import types

        _no_cursor(args, params, cursor)
        handed = await self._handed_list("prompts")
        return types.ListPromptsResult(prompts=_items(types, types.Prompt, handed, "name"))

    async def list_resources(self, *args: Any, params: Any = None, cursor: Optional[str] = None) -> Any:
        """The resources of the checked list the record lets through (a
        resource's unpinned size is not handed over)."""
        from mcp import types

        _no_cursor(args, params, cursor)
        handed = await self._handed_list("resources")
        return types.ListResourcesResult(resources=_items(types, types.Resource, handed, "uri"))

    async def list_resource_templates(self, *args: Any, params: Any = None, cursor: Optional[str] = None) -> Any:
        """The resource templates of the checked list the record lets through."""
        from mcp import types

        _no_cursor(args, params, cursor)
        handed = await self._handed_list("resource_templates")
        # By its wire name: mcp 2.x names the field resource_templates.
        return types.ListResourceTemplatesResult.model_validate({"resourceTemplates": _items(types, types.ResourceTemplate, handed, "uriTemplate")})

    async def get_prompt(self, name: str, arguments: Optional[Dict[str, Any]] = None, *args: Any, **kwargs: Any) -> Any:
        """Gets a prompt the session engine allows; refuses any other with
        ItemRefused before the server is asked. The messages answered are
        the server's at this time, parsed by the SDK: data, like a tool
        call's result, which no lockfile pins (only the prompt's listing is)."""
        await self._allow("prompts", name)
        return await cast("McpPreflight", self).session.get_prompt(name, arguments, *args, **kwargs)

    async def read_resource(self, uri: Any, *args: Any, **kwargs: Any) -> Any:
        """Reads a resource the session engine allows (one of the checked
        list the record lets through), or the ui:// template a tool it hands
        over names (MCP Apps), and refuses any other URI with ItemRefused in
        the engine's words, one only a resource template matches included. A ui:// template is read, then checked by the core
        against the lockfile's pin: one that is not the template approved
        is refused, never handed to a renderer. Another resource's contents
        are the server's answer at this time, parsed by the SDK: data, which
        no lockfile pins."""
        key = str(uri)
        if key.startswith("ui://"):
            return await self._read_ui_template(key)
        await self._allow("resources", key)
        return await cast("McpPreflight", self).session.read_resource(uri, *args, **kwargs)

    async def _read_ui_template(self, uri: str) -> Any:
        """The ui:// template uri, handed over only when a handed tool names
        it and the core finds it the one pinned."""
        from mcp import types

        pf = cast("McpPreflight", self)
        rec, raw, _ = await pf._gate()
        # The handed tools as one page of the core's own texts, so that the
        # core reads the bytes it wrote.
        tools = ",".join(t["tool"] for t in pf._handoff(rec).get("tools") or [])
        try:
            named = uri in ui_templates(pages=[('{"tools":[' + tools + "]}").encode("utf-8")])["uris"]
        except CoreError:
            named = False
        if not named:
            raise ItemRefused(rec, raw, "ui_templates", uri, reason="not_named")
        # One read at a time with the checks: the tap takes its answer.
        async with pf._check_lock:
            try:
                with anyio.fail_after(pf.timeout):
                    page, failure = await _fetch(pf, METHOD_READ, lambda: pf.session.read_resource(uri), uri)
            except TimeoutError:
                page, failure = None, FAULT_TIMEOUT
        if failure or page is None:
            raise PreflightError(f"crawlcheck: reading {show(uri)}: {failure}")
        check = ui_template_check(record=raw, lock=pf._lock_bytes, uri=uri, result=page)
        if not check["same"]:
            if check.get("reason") is not None:
                raise ItemRefused(rec, raw, "ui_templates", uri, reason=str(check["reason"]))
            raise ItemRefused(rec, raw, "ui_templates", uri, parts=[str(p) for p in check.get("parts") or []])
        # The result the core wrote from what it compared (never the answer
        # itself: its members beside contents are in no part's hash), parsed
        # by the SDK's own type; one it cannot hold is refused as
        # malformed, as Go and JS do.
        try:
            return types.ReadResourceResult.model_validate_json(str(check["template"]))
        except Exception:  # noqa: BLE001 - pydantic's error: the SDK cannot hold what was compared
            raise ItemRefused(rec, raw, "ui_templates", uri, reason="malformed") from None

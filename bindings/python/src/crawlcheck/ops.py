"""One typed function per op of the core (docs/abi.md).

Each takes the request's fields as keyword arguments and returns the op's
result as a dict; a field left at None is not sent. A document field
(``lock``, ``policy``, ``pages`` elements, ``record``...) takes a ``str``
(the document's text), ``bytes`` (its exact bytes: a raw attachment with ABI
2) or a JSON value (a dict or list). The core decides everything; these only
name the fields.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence, Union

from ._core import call

#: A document: its text, its exact bytes, or the JSON value itself.
Document = Union[str, bytes, Mapping[str, Any], Sequence[Any]]
#: A tools/list page as received: its text or its exact bytes.
Page = Union[str, bytes, Mapping[str, Any]]
#: A JSON value.
JSON = Any
Result = Dict[str, Any]


def _req(**fields: Any) -> Dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def version() -> Result:
    """The engine version, the ABI, the ops and the rule table's hash."""
    return call("version", {})


def rules() -> Result:
    """The rule table and its rules_sha256."""
    return call("rules", {})


def canonicalize(*, json: Union[str, bytes]) -> Result:
    """``{"canonical", "sha256"}`` of a JSON document (RFC 8785)."""
    return call("canonicalize", _req(json=json))


def hash_tools(
    *,
    tools: Optional[Sequence[JSON]] = None,
    pages: Optional[Sequence[Page]] = None,
    page_cap_reached: Optional[bool] = None,
) -> Result:
    """Per-tool and whole-list hashes of a tool source."""
    return call("hash_tools", _req(tools=tools, pages=pages, page_cap_reached=page_cap_reached))


def make_lock(
    *,
    tools: Optional[Sequence[JSON]] = None,
    pages: Optional[Sequence[Page]] = None,
    page_cap_reached: Optional[bool] = None,
    format: Optional[str] = None,
    server: Optional[Mapping[str, Any]] = None,
    observed: Optional[Mapping[str, Any]] = None,
    approved_at: Optional[str] = None,
    name: Optional[str] = None,
    generated_by: Optional[str] = None,
    into: Optional[Document] = None,
) -> Result:
    """``{"lock": "<file bytes>"}`` pinning a tool source, or the observed
    facts (continuity_check's ``observed``: the core decides what is pinned)."""
    return call(
        "make_lock",
        _req(
            tools=tools,
            pages=pages,
            page_cap_reached=page_cap_reached,
            format=format,
            server=server,
            observed=observed,
            approved_at=approved_at,
            name=name,
            generated_by=generated_by,
            into=into,
        ),
    )


def verify_lock(
    *,
    lock: Document,
    now: str,
    key_directory: Optional[Document] = None,
    operator_keys: Optional[Sequence[str]] = None,
    require_signed: Optional[bool] = None,
    server_name: Optional[str] = None,
) -> Result:
    """Format, trust and digests of a lockfile."""
    return call(
        "verify_lock",
        _req(
            lock=lock,
            now=now,
            key_directory=key_directory,
            operator_keys=operator_keys,
            require_signed=require_signed,
            server_name=server_name,
        ),
    )


def sign_lock(*, lock: Document, private_key: str, key_id: Optional[str] = None) -> Result:
    """``{"lock", "sha256", "key_id"}``: the lockfile signed with an Ed25519 seed."""
    return call("sign_lock", _req(lock=lock, private_key=private_key, key_id=key_id))


def public_key(*, private_key: str) -> Result:
    """``{"public_key", "key_id"}`` of an Ed25519 seed."""
    return call("public_key", _req(private_key=private_key))


def convert_lock(
    *,
    lock: Document,
    to: str,
    name: Optional[str] = None,
    server: Optional[Mapping[str, Any]] = None,
    approved_at: Optional[str] = None,
    generated_by: Optional[str] = None,
    tools: Optional[Sequence[JSON]] = None,
    pages: Optional[Sequence[Page]] = None,
) -> Result:
    """``{"lock", "lost"}``: a lockfile in the other format."""
    return call(
        "convert_lock",
        _req(
            lock=lock,
            to=to,
            name=name,
            server=server,
            approved_at=approved_at,
            generated_by=generated_by,
            tools=tools,
            pages=pages,
        ),
    )


def diff(*, old: Document, new: Document, server_name: Optional[str] = None) -> Result:
    """What changed between two tool sources or lockfiles."""
    return call("diff", _req(old=old, new=new, server_name=server_name))


def lock_check(
    *,
    lock: Document,
    tools: Optional[Sequence[JSON]] = None,
    pages: Optional[Sequence[Page]] = None,
    page_cap_reached: Optional[bool] = None,
    server_name: Optional[str] = None,
    failure: Optional[str] = None,
    failure_detail: Optional[str] = None,
) -> Result:
    """The crawlcheck-mcp-lock-check answer (the drift gate)."""
    return call(
        "lock_check",
        _req(
            lock=lock,
            tools=tools,
            pages=pages,
            page_cap_reached=page_cap_reached,
            server_name=server_name,
            failure=failure,
            failure_detail=failure_detail,
        ),
    )


def continuity_check(
    *,
    now: str,
    lock: Document,
    observed: Mapping[str, Any],
    mode: Optional[str] = None,
    server_name: Optional[str] = None,
    policy: Optional[Document] = None,
    expected_policy_version: Optional[str] = None,
    key_directory: Optional[Document] = None,
    operator_keys: Optional[Sequence[str]] = None,
    require_signed_baseline: Optional[bool] = None,
    evidence: Optional[Sequence[Mapping[str, Any]]] = None,
    issuer: Optional[Mapping[str, Any]] = None,
    prev_record_sha256: Optional[str] = None,
    refreshed: Optional[bool] = None,
    log: Optional[Mapping[str, Any]] = None,
) -> Result:
    """The crawlcheck-continuity-record (docs/continuity.md); ``log`` is the
    issuer's transparency-log proof for the lockfile (docs/log.md)."""
    return call(
        "continuity_check",
        _req(
            now=now,
            mode=mode,
            lock=lock,
            server_name=server_name,
            observed=observed,
            policy=policy,
            expected_policy_version=expected_policy_version,
            key_directory=key_directory,
            operator_keys=operator_keys,
            require_signed_baseline=require_signed_baseline,
            evidence=evidence,
            issuer=issuer,
            prev_record_sha256=prev_record_sha256,
            refreshed=refreshed,
            log=log,
        ),
    )


def continuity_handoff(
    *,
    now: str,
    lock: Document,
    observed: Mapping[str, Any],
    mode: Optional[str] = None,
    server_name: Optional[str] = None,
    policy: Optional[Document] = None,
    expected_policy_version: Optional[str] = None,
    key_directory: Optional[Document] = None,
    operator_keys: Optional[Sequence[str]] = None,
    require_signed_baseline: Optional[bool] = None,
    evidence: Optional[Sequence[Mapping[str, Any]]] = None,
    issuer: Optional[Mapping[str, Any]] = None,
    prev_record_sha256: Optional[str] = None,
    refreshed: Optional[bool] = None,
) -> Result:
    """continuity_check and what the host does with it (docs/continuity.md, The handoff).

    ``{record, session, tools, withheld, calls, instructions}``: hand the
    framework exactly the ``tools`` objects (each ``tool`` the JSON text to
    parse with the SDK's own types), call only ``calls.names``.
    """
    return call(
        "continuity_handoff",
        _req(
            now=now,
            mode=mode,
            lock=lock,
            server_name=server_name,
            observed=observed,
            policy=policy,
            expected_policy_version=expected_policy_version,
            key_directory=key_directory,
            operator_keys=operator_keys,
            require_signed_baseline=require_signed_baseline,
            evidence=evidence,
            issuer=issuer,
            prev_record_sha256=prev_record_sha256,
            refreshed=refreshed,
        ),
    )


def verify_record(*, record: Document) -> Result:
    """``{"valid", "record_sha256", "computed_sha256", "reason"}``."""
    return call("verify_record", _req(record=record))


def verify_chain(*, records: Union[str, bytes]) -> Result:
    """Checks a JSON-lines record log: every hash and every link."""
    return call("verify_chain", _req(records=records))


def guard(
    *,
    receipt: Document,
    expected_subject: str,
    expected_operation: str,
    now: str,
    lock: Document,
    key_directory: Optional[Document] = None,
    fetched_key_directory: Optional[Document] = None,
    pinned_keys: Optional[Sequence[Mapping[str, str]]] = None,
    seen_nonces: Optional[Sequence[Any]] = None,
    policy: Optional[Document] = None,
    observed_tools_sha256: Optional[str] = None,
) -> Result:
    """The crawlcheck-guard-answer on a receipt (spec §7). Give the issuer's
    directory as fetched in ``fetched_key_directory`` (with ``pinned_keys``):
    the core keeps only the pinned keys of it."""
    return call(
        "guard",
        _req(
            receipt=receipt,
            expected_subject=expected_subject,
            expected_operation=expected_operation,
            now=now,
            key_directory=key_directory,
            fetched_key_directory=fetched_key_directory,
            pinned_keys=pinned_keys,
            seen_nonces=seen_nonces,
            lock=lock,
            policy=policy,
            observed_tools_sha256=observed_tools_sha256,
        ),
    )


def replay_decision(*, receipt: Document, lock: Optional[Document] = None) -> Result:
    """Re-runs a receipt's decision from the inputs it carries."""
    return call("replay_decision", _req(receipt=receipt, lock=lock))


def sign_receipt(
    *,
    private_key: str,
    issuer: str,
    issued_at: str,
    expires_at: str,
    nonce: str,
    subject: str,
    inputs: Mapping[str, Any],
    kind: Optional[str] = None,
    key_id: Optional[str] = None,
    carry_lock: Optional[bool] = None,
) -> Result:
    """``{"receipt", "sha256", "key_id"}``: a signed receipt (tests, issuers)."""
    return call(
        "sign_receipt",
        _req(
            kind=kind,
            private_key=private_key,
            key_id=key_id,
            issuer=issuer,
            issued_at=issued_at,
            expires_at=expires_at,
            nonce=nonce,
            subject=subject,
            inputs=inputs,
            carry_lock=carry_lock,
        ),
    )


def refusal(*, record: Document, tool: Optional[str] = None) -> Result:
    """``{"text"}``: why a record refuses a call (``tool``) or the session, in
    the core's words: the effect, the observations, what differed."""
    return call("refusal", _req(record=record, tool=tool))


def escape_text(*, text: Union[str, bytes]) -> Result:
    """``{"text"}``: a server's string made safe to show a person (C3)."""
    return call("escape_text", _req(text=text))


def endpoint(*, url: Optional[str] = None, command: Optional[Sequence[str]] = None) -> Result:
    """``{"endpoint"}``: the string a record carries for a server (C3)."""
    return call("endpoint", _req(url=url, command=command))


def log_entry(*, document: Optional[Document] = None, entry: Optional[str] = None) -> Result:
    """``{"entry", "leaf_hash"}``: the transparency-log entry of a signed
    lockfile or receipt (docs/log.md)."""
    return call("log_entry", _req(document=document, entry=entry))


def log_verify(
    *,
    proof: str,
    now: str,
    key_directory: Document,
    document: Optional[Document] = None,
    entry: Optional[str] = None,
    checkpoint: Optional[str] = None,
    consistency: Optional[Sequence[str]] = None,
) -> Result:
    """Verifies a tlog-proof of a signed document, and its checkpoint against
    the one kept: ``{"valid", "observation", "included", "index",
    "checkpoint", "consistent", "reason", "detail", "keep"}``."""
    return call(
        "log_verify",
        _req(
            document=document,
            entry=entry,
            proof=proof,
            now=now,
            key_directory=key_directory,
            checkpoint=checkpoint,
            consistency=consistency,
        ),
    )


def log_consistency(
    *,
    new: str,
    now: str,
    key_directory: Document,
    checkpoint: Optional[str] = None,
    consistency: Optional[Sequence[str]] = None,
) -> Result:
    """Verifies the checkpoint a log serves now and its consistency with the
    one kept: ``{"valid", "observation", "checkpoint", "consistent",
    "reason", "detail", "keep"}``."""
    return call(
        "log_consistency",
        _req(new=new, now=now, key_directory=key_directory, checkpoint=checkpoint, consistency=consistency),
    )
def replay_state(*, file: Optional[Document] = None, seen_nonces: Optional[Sequence[JSON]] = None) -> Result:
    """``{"seen_nonces", "file"}``: the issuer replay-state file read (``file``)
    or written (``seen_nonces``, guard's answer) by the core's one format."""
    return call("replay_state", _req(file=file, seen_nonces=seen_nonces))


def pilot_batch(
    *,
    records: Union[str, bytes],
    head: Optional[str] = None,
    logged_head: Optional[str] = None,
    known: Optional[Sequence[str]] = None,
) -> Result:
    """``{"results", "accepted", "head", "digests", "entry"}``: a pilot's
    upload judged record by record against its chain (what the issuer
    answers ``POST /api/v1/pilot/{id}/records`` with)."""
    return call("pilot_batch", _req(records=records, head=head, logged_head=logged_head, known=known))


def next_page(*, page: Page, followed: Optional[Sequence[str]] = None, page_cap: Optional[int] = None) -> Result:
    """``{"cursor", "stop", "followed", "page_cap_reached"}``: one step of a
    tools/list walk, the cursor to send next or why the walk stops."""
    return call("next_page", _req(page=page, followed=followed, page_cap=page_cap))


def approve(
    *,
    record: Document,
    lock: Document,
    names: Sequence[str],
    approved_at: str,
    tools: Optional[Sequence[JSON]] = None,
    pages: Optional[Sequence[Page]] = None,
    page_cap_reached: Optional[bool] = None,
    server_name: Optional[str] = None,
    server: Optional[Mapping[str, Any]] = None,
    observed: Optional[Mapping[str, Any]] = None,
) -> Result:
    """Re-approval of named tools (C3): the new lockfile, or why not."""
    return call(
        "approve",
        _req(
            record=record,
            lock=lock,
            tools=tools,
            pages=pages,
            page_cap_reached=page_cap_reached,
            names=names,
            approved_at=approved_at,
            server_name=server_name,
            server=server,
            observed=observed,
        ),
    )


def scan(
    *,
    tools: Optional[Sequence[JSON]] = None,
    pages: Optional[Sequence[Page]] = None,
    page_cap_reached: Optional[bool] = None,
) -> Result:
    """The scan_at_approval object of a tool source (C3)."""
    return call("scan", _req(tools=tools, pages=pages, page_cap_reached=page_cap_reached))

"""crawlcheck: the CrawlCheck verifier core (libcrawlcheck.so, or
crawlcheck.wasm under wasmtime where no wheel has a library) for Python.

``call(op, request)`` is the core's one function; ``crawlcheck.ops`` has one
typed function per op. ``with_preflight`` / ``McpPreflight`` put the
continuity check in front of an official ``mcp`` ClientSession.
"""

from __future__ import annotations

from typing import Any

from ._codes import ERROR_CODES
from ._errors import CrawlcheckError
from ._core import CoreError, call, call_bytes, call_result, encode_request
from ._lib import SUPPORTED_ABI, LibraryError, core_info
from .ops import (
    approve,
    canonicalize,
    ci_plan,
    ci_verdict,
    continuity_check,
    continuity_handoff,
    convert_lock,
    corrections_apply,
    diff,
    document_kind,
    endpoint,
    escape_text,
    refusal,
    guard,
    hash_tools,
    instructions_diff,
    lock_check,
    log_consistency,
    log_entry,
    log_verify,
    make_lock,
    next_page,
    session_step,
    pilot_batch,
    pilot_queue,
    public_key,
    replay_decision,
    replay_state,
    resign_correction,
    resource_metadata,
    rules,
    scan,
    scan_items,
    sign_correction,
    sign_lock,
    sign_pilot_upload,
    sign_receipt,
    ui_template_check,
    ui_templates,
    verify_chain,
    verify_lock,
    verify_pilot_upload,
    verify_record,
    version,
)

__version__ = "2.0.0"

__all__ = [
    "SUPPORTED_ABI",
    "ContinuityRefused",
    "CoreError",
    "CrawlcheckError",
    "ERROR_CODES",
    "ItemRefused",
    "LibraryError",
    "McpPreflight",
    "PreflightError",
    "__version__",
    "approve",
    "call",
    "core_info",
    "call_bytes",
    "call_result",
    "canonicalize",
    "ci_plan",
    "ci_verdict",
    "continuity_check",
    "continuity_handoff",
    "convert_lock",
    "corrections_apply",
    "diff",
    "document_kind",
    "encode_request",
    "endpoint",
    "escape_text",
    "refusal",
    "guard",
    "hash_tools",
    "instructions_diff",
    "lock_check",
    "log_consistency",
    "log_entry",
    "log_verify",
    "make_lock",
    "next_page",
    "session_step",
    "pilot_batch",
    "pilot_queue",
    "public_key",
    "replay_decision",
    "replay_state",
    "resign_correction",
    "resource_metadata",
    "rules",
    "scan",
    "scan_items",
    "sign_correction",
    "sign_lock",
    "sign_pilot_upload",
    "sign_receipt",
    "ui_template_check",
    "ui_templates",
    "verify_chain",
    "verify_lock",
    "verify_pilot_upload",
    "verify_record",
    "version",
    "with_preflight",
]


def __getattr__(name: str) -> Any:
    # The preflight imports the mcp package; the core API must not need it.
    if name in ("McpPreflight", "with_preflight", "ContinuityRefused", "ItemRefused", "PreflightError"):
        from . import preflight

        return getattr(preflight, name)
    raise AttributeError(f"module 'crawlcheck' has no attribute {name!r}")

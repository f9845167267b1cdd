"""The hosts' limits (docs/abi.md, "The hosts' limits"): the version op's
limits member, read from the core once. Every bound this package applies by
default (a server frame, a check's deadline, the pages together, the
issuer's deadline and answer, a record log) is one of these, never a number
of its own, so a server meets the same bounds from Python as from Go, the
CLI and JS."""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, Optional

from .ops import version

_limits: Optional[Mapping[str, int]] = None


def limits() -> Mapping[str, int]:
    """The core's limits, read-only: answer_bytes, check_timeout_ms,
    issuer_answer_bytes, issuer_timeout_ms, pages, pages_bytes,
    pilot_ack_bytes, pilot_answer_bytes, record_log_bytes, request_bytes."""
    global _limits
    if _limits is None:
        _limits = MappingProxyType({str(k): int(v) for k, v in version()["limits"].items()})
    return _limits

"""The package's default bounds are the core's answer (version's limits,
issue 18), not numbers of its own: a server frame, a check's deadline, the
issuer's deadline and answer, a record log — the bounds the Go preflight,
the CLI and JS apply too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servers import ACTIVE_KEY, pin

from crawlcheck import version
from crawlcheck._issuer import Issuer, IssuerClient
from crawlcheck._limits import limits
from crawlcheck.preflight import with_preflight
from crawlcheck.transport import Wire


class Untouched:
    """A session the preflight is only handed, never entered."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the session was reached ({name})")


def test_limits_are_the_version_ops() -> None:
    assert dict(limits()) == version()["limits"]
    for k in ("answer_bytes", "check_timeout_ms", "issuer_answer_bytes", "issuer_timeout_ms", "pages_bytes", "record_log_bytes"):
        assert limits()[k] > 0, k


def test_a_preflight_without_bounds_of_its_own_applies_the_cores(tmp_path: Path) -> None:
    lock = str(pin(tmp_path, "http://127.0.0.1:9/mcp"))
    pf = with_preflight(Untouched(), lock, endpoint="http://127.0.0.1:9/mcp")  # type: ignore[arg-type]
    assert pf.timeout * 1000 == version()["limits"]["check_timeout_ms"]
    assert pf.max_answer_bytes == version()["limits"]["answer_bytes"]
    assert Wire().limit == version()["limits"]["answer_bytes"]
    given = with_preflight(Untouched(), lock, endpoint="http://127.0.0.1:9/mcp", timeout=2.5, max_answer_bytes=1 << 10)  # type: ignore[arg-type]
    assert (given.timeout, given.max_answer_bytes) == (2.5, 1 << 10)


def test_the_issuer_clients_bounds_are_the_cores() -> None:
    c = IssuerClient(Issuer(url="http://127.0.0.1:2", pinned_keys=[ACTIVE_KEY]), None, "")
    assert c.timeout * 1000 == version()["limits"]["issuer_timeout_ms"]
    assert c.max_answer == version()["limits"]["issuer_answer_bytes"]

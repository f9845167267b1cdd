"""One error base class: every error the package raises for a reason of its
own is a CrawlcheckError, carrying the core's code when the core refused
(docs/python.md, "Errors"), and keeping the standard class it was before as
a second base."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from servers import NOW

import crawlcheck
from crawlcheck import CoreError, CrawlcheckError, LibraryError
from crawlcheck._files import FileRefused
from crawlcheck._issuer import IssuerConfigError
from crawlcheck._log import LogError
from crawlcheck.preflight import ContinuityRefused, PreflightError, with_preflight

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_every_error_class_derives_from_crawlcheck_error() -> None:
    for cls, also in [
        (CoreError, Exception),
        (ContinuityRefused, Exception),
        (PreflightError, RuntimeError),
        (LibraryError, RuntimeError),
        (LogError, RuntimeError),
        (FileRefused, OSError),
        (IssuerConfigError, ValueError),
    ]:
        assert issubclass(cls, CrawlcheckError) and issubclass(cls, also), cls
    assert crawlcheck.PreflightError is PreflightError and crawlcheck.ContinuityRefused is ContinuityRefused


def test_openai_agents_tool_filter_refusal_is_a_crawlcheck_error() -> None:
    agents = pytest.importorskip("agents")
    assert agents is not None
    from crawlcheck.openai_agents import ToolFilterRefused

    assert issubclass(ToolFilterRefused, CrawlcheckError)


def test_a_core_refusal_carries_the_core_code() -> None:
    with pytest.raises(CrawlcheckError) as e:
        crawlcheck.verify_lock(lock="{", now="2026-11-30T12:00:00Z")
    assert isinstance(e.value, CoreError) and e.value.code == "json_syntax" and e.value.code in crawlcheck.ERROR_CODES


class Unstarted:
    """A ClientSession the preflight must never reach."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the session was reached ({name}) before the lockfile was refused")


async def test_a_lockfile_the_core_refuses_is_a_preflight_error_with_the_core_code(tmp_path: Path) -> None:
    lock = tmp_path / "crawlcheck.lock.json"
    lock.write_text("{")
    with pytest.raises(CrawlcheckError) as e:
        async with with_preflight(Unstarted(), str(lock), endpoint="http://127.0.0.1:9/mcp", now=lambda: NOW):
            pass
    assert isinstance(e.value, PreflightError) and isinstance(e.value.__cause__, CoreError)
    assert e.value.code == "json_syntax"


async def test_a_file_refusal_has_no_code(tmp_path: Path) -> None:
    with pytest.raises(CrawlcheckError) as e:
        async with with_preflight(Unstarted(), str(tmp_path), endpoint="http://127.0.0.1:9/mcp", now=lambda: NOW):
            pass
    assert isinstance(e.value, PreflightError) and isinstance(e.value.__cause__, FileRefused)
    assert e.value.code is None

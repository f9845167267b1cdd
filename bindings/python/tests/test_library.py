"""The library itself: loading, its errors, threads, fork, memory."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import crawlcheck
from crawlcheck import _lib

EXAMPLE = Path(__file__).resolve().parents[3] / "testdata" / "ops" / "continuity_check" / "example.json"


def run_python(code: str, **env: str) -> "subprocess.CompletedProcess[str]":
    e = dict(os.environ)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=60)


def test_call_and_core_error() -> None:
    v = crawlcheck.version()
    assert v["abi"] in crawlcheck.SUPPORTED_ABI and v["engine"].startswith("crawlcheck-core/")
    with pytest.raises(crawlcheck.CoreError) as e:
        crawlcheck.call("no_such_op", {})
    assert e.value.code == "unknown_op"
    with pytest.raises(crawlcheck.CoreError) as e:
        crawlcheck.verify_lock(lock="{", now="2026-11-30T12:00:00Z")
    assert e.value.code == "json_syntax"


def test_answer_with_nul_is_read_whole() -> None:
    # A c_char_p result would stop at the first NUL byte; the answer is read
    # by its length. JSON escapes a NUL inside a string, so put a NUL in the
    # request and see the escaped form come back whole.
    out = crawlcheck.canonicalize(json=b'{"a":"x\\u0000y","b":1}')
    assert out["canonical"] == '{"a":"x\\u0000y","b":1}'


def test_missing_library_is_a_clear_error(tmp_path: Path) -> None:
    r = run_python("import crawlcheck; crawlcheck.version()", CRAWLCHECK_LIB=str(tmp_path / "nope.so"))
    assert r.returncode != 0
    assert "LibraryError" in r.stderr and "the core library is missing" in r.stderr


def _package_copy(tmp_path: Path, lib: bytes | None) -> Path:
    """The installed package copied to tmp_path, its library left out (or
    replaced by lib's bytes): a wheel of another platform, as this one sees it."""
    pkg = Path(crawlcheck.__file__).resolve().parent
    shutil.copytree(pkg, tmp_path / "crawlcheck", ignore=shutil.ignore_patterns("lib", "__pycache__"))
    if lib is not None:
        (tmp_path / "crawlcheck" / "lib").mkdir()
        (tmp_path / "crawlcheck" / "lib" / _lib.LIB_NAME).write_bytes(lib)
    return tmp_path


def _run_copy(root: Path) -> "subprocess.CompletedProcess[str]":
    e = {k: v for k, v in os.environ.items() if k not in ("CRAWLCHECK_LIB", "PYTHONPATH")}
    code = "import crawlcheck; print(crawlcheck.__file__, flush=True); crawlcheck.version()"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, cwd=root, timeout=60)


def test_no_library_for_this_platform_names_it(tmp_path: Path) -> None:
    """No library in the package: the message names the platform, the file
    looked for, and the platforms that have wheels."""
    root = _package_copy(tmp_path, None)
    r = _run_copy(root)
    assert r.stdout.startswith(str(root)), r.stdout
    assert r.returncode != 0 and "LibraryError" in r.stderr
    assert f"no core library for this platform ({_lib.platform_name()})" in r.stderr
    assert _lib.platform_name().split()[1].rstrip(",") == __import__("platform").machine()
    assert f"looked for {root / 'crawlcheck' / 'lib' / _lib.LIB_NAME}" in r.stderr
    assert "Windows amd64" in r.stderr and "CRAWLCHECK_LIB" in r.stderr


def test_library_of_another_platform_names_this_one(tmp_path: Path) -> None:
    """A library this system cannot load (another platform's bytes): the
    message names this platform and where the wheels are built for."""
    root = _package_copy(tmp_path, b"MZ\x90\x00 not a library for this system")
    r = _run_copy(root)
    assert r.returncode != 0 and "LibraryError" in r.stderr
    assert f"on this platform ({_lib.platform_name()})" in r.stderr
    assert "macOS arm64 and x86_64" in r.stderr


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler to build a library of another ABI")
def test_other_abi_is_a_clear_error(tmp_path: Path) -> None:
    src = tmp_path / "fake.c"
    src.write_text(
        textwrap.dedent(
            """
            #include <stdint.h>
            #include <stddef.h>
            uint32_t crawlcheck_abi_version(void) { return 99; }
            uint8_t *crawlcheck_call(const char *op, const uint8_t *r, size_t n, size_t *o) { return 0; }
            void crawlcheck_free(uint8_t *p) {}
            """
        )
    )
    so = tmp_path / "libcrawlcheck.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    r = run_python("import crawlcheck; crawlcheck.version()", CRAWLCHECK_LIB=str(so))
    assert r.returncode != 0
    assert "implements ABI version 99" in r.stderr


def test_threads_give_identical_answers() -> None:
    """8 threads × 1,000 calls of a real check give the same bytes."""
    from vectors import answers_from_threads, compact, members

    m = members(EXAMPLE.read_bytes())
    req, want = compact(m["request"]), compact(m["response"])
    got, errors = answers_from_threads(lambda: crawlcheck.call_bytes("continuity_check", req), threads=8, calls=1000)
    assert not errors
    assert all(g == {want} for g in got)


def _fork_child(body: str) -> "tuple[str, bool]":
    """Runs body in a child made by fork after the library was loaded; returns
    what it wrote and whether it finished within 10 s (else it is killed)."""
    crawlcheck.version()  # the library is loaded and its runtime running
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns to pytest
        os.close(r)
        try:
            out = eval(body)  # noqa: S307 - the test's own expression
        except BaseException as e:  # noqa: BLE001
            out = f"{type(e).__name__}: {e}"
        os.write(w, str(out).encode()[:4000])
        os._exit(0)
    os.close(w)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(r)
        return "", False
    data = os.read(r, 4000).decode()
    os.close(r)
    return data, True


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_fork_child_gets_a_clear_error() -> None:
    """This package refuses a call from a child made by fork at once."""
    out, finished = _fork_child("crawlcheck.version()")
    assert finished, "the child hung"
    assert out.startswith("LibraryError:") and "fork" in out, out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_fork_child_calling_the_library_directly_gets_an_error() -> None:
    """The library itself (not this package's guard) answers a forked child
    with an error envelope instead of hanging."""
    body = (
        "(lambda lib, n: (lambda p: __import__('ctypes').string_at(p, n.value).decode())"
        "(lib._call(b'version', b'{}', 2, __import__('ctypes').byref(n))))"
        "(crawlcheck._lib.library(), __import__('ctypes').c_size_t(0))"
    )
    out, finished = _fork_child(body)
    assert finished, "the child hung in the library"
    env = json.loads(out)
    assert env["ok"] is False and env["error"]["code"] == "forked_process", out


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_no_rss_growth_over_100000_calls() -> None:
    req = b'{"json":"{\\"b\\":[1,2,3]}"}'
    for _ in range(20_000):  # the Go heap and the allocator's arenas settle first
        crawlcheck.call_bytes("canonicalize", req)
    before = _rss()
    for _ in range(100_000):
        crawlcheck.call_bytes("canonicalize", req)
    grown = _rss() - before
    # Measured: flat (within ±1.5 MiB) with the answer freed; ~13.5 MiB
    # when crawlcheck_free is skipped.
    assert grown < 6 << 20, f"RSS grew by {grown} bytes"


def test_attachments_carry_bytes_that_are_not_utf8() -> None:
    """A page that is not UTF-8 arrives as it is (a raw attachment) and is an
    observation, not a broken request; the same page as text gives the same
    record as its attachment."""
    from vectors import members

    req = json.loads(members(EXAMPLE.read_bytes())["request"])
    bad = dict(req, observed=dict(req["observed"], pages=[b'{"tools":[{"name":"\xff"}]}']))
    rec = crawlcheck.continuity_check(**bad)
    assert [o["observation"] for o in rec["observations"]] == ["response_malformed"]
    as_text = crawlcheck.call_result("continuity_check", req)
    page = req["observed"]["pages"][0]
    as_bytes = crawlcheck.call_result("continuity_check", dict(req, observed=dict(req["observed"], pages=[page.encode()])))
    assert as_text == as_bytes
    body, att = crawlcheck.encode_request(dict(req, lock=json.dumps(req["lock"]).encode()))
    assert att is not None and b'"lock":{"$raw":0}' in body


def test_one_function_per_op_the_core_answers() -> None:
    """Every op the loaded core lists has its typed function, exported."""
    import crawlcheck.ops as ops

    core_ops = set(crawlcheck.version()["ops"])
    for op in core_ops:
        assert callable(getattr(ops, op, None)), f"no function for op {op}"
        assert op in crawlcheck.__all__, f"{op} not exported"


def test_every_module_defines_what_it_exports() -> None:
    # A name in __all__ that the module does not define breaks
    # `from crawlcheck.x import *` with an AttributeError (preflight.py named
    # two effect helpers that had been removed).
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(crawlcheck.__path__):
        name = f"crawlcheck.{info.name}"
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue  # an optional integration whose framework is not installed here
        for exported in getattr(mod, "__all__", []):
            assert hasattr(mod, exported), f"{name}.__all__ names {exported}, which it does not define"


def test_version_is_the_projects_one_in_changelog() -> None:
    # One version for the whole project: the first release heading of CHANGELOG.md.
    changelog = (Path(__file__).resolve().parents[3] / "CHANGELOG.md").read_text(encoding="utf-8")
    first = next(line for line in changelog.splitlines() if line.startswith("## ") and line[3:4].isdigit())
    assert first.split()[1] == crawlcheck.__version__
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert f'\nversion = "{crawlcheck.__version__}"\n' in pyproject


def test_error_codes_are_the_documented_list() -> None:
    # Generated from core/cerr (go test ./core -update); docs/abi.md's table is the same list.
    import re

    abi = (Path(__file__).resolve().parents[3] / "docs" / "abi.md").read_text(encoding="utf-8")
    section = abi.split("## Error codes (closed list)")[1].split("\n## ")[0]
    assert list(crawlcheck.ERROR_CODES) == re.findall(r"(?m)^\| `([a-z0-9_]+)` \|", section)

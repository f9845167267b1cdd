"""The second backend: crawlcheck.wasm under wasmtime (the py3-none-any
wheel's core). test_vectors.py replays every vector through it when
CRAWLCHECK_CORE=wasm (make test-python runs it so); these tests pin how the
loader chooses it, what it says when nothing fits, and that its answers at
the edges (over the cap, an unknown op, threads) are the native library's
bytes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

pytest.importorskip("wasmtime")

import crawlcheck  # noqa: E402
from crawlcheck import _lib  # noqa: E402
from crawlcheck._wasm import WasmCore  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
WASM = os.environ.get(_lib.WASM_ENV) or str(Path(os.environ.get("BUILD", ROOT / "build")) / "crawlcheck.wasm")
ENV_NAMES = (_lib.LIB_ENV, _lib.WASM_ENV, _lib.CORE_ENV, "PYTHONPATH")


@pytest.fixture(scope="module")
def wasm() -> WasmCore:
    return WasmCore(WASM, _lib.SUPPORTED_ABI)


@pytest.fixture(scope="module")
def native() -> _lib.Library:
    path = _lib.default_path()
    if not os.path.exists(path):
        pytest.fail(f"no native library at {path} to compare with (make cshared; CRAWLCHECK_LIB)")
    return _lib.Library(path)


def run_python(code: str, cwd: Path, **env: str) -> "subprocess.CompletedProcess[str]":
    e = {k: v for k, v in os.environ.items() if k not in ENV_NAMES}
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, cwd=cwd, timeout=120)


def package_copy(tmp_path: Path, wasm: bool) -> Path:
    """The package as the pure wheel lays it out: crawlcheck/lib/ holds
    crawlcheck.wasm and no native library (or, wasm=False, nothing)."""
    pkg = Path(crawlcheck.__file__).resolve().parent
    shutil.copytree(pkg, tmp_path / "crawlcheck", ignore=shutil.ignore_patterns("lib", "__pycache__"))
    (tmp_path / "crawlcheck" / "lib").mkdir()
    if wasm:
        shutil.copyfile(WASM, tmp_path / "crawlcheck" / "lib" / _lib.WASM_NAME)
    return tmp_path


INFO = "import crawlcheck, json; print(json.dumps(crawlcheck.core_info()))"


def test_forced_core_is_the_one_running() -> None:
    """CRAWLCHECK_CORE picks the backend, and core_info() says which: the
    replay of the vectors under CRAWLCHECK_CORE=wasm is through the module."""
    want = os.environ.get(_lib.CORE_ENV)
    info = crawlcheck.core_info()
    if want:
        assert info["core"] == want
    assert info["abi"] in crawlcheck.SUPPORTED_ABI
    assert info["runtime"] == ("ctypes" if info["core"] == "native" else f"wasmtime {_wasmtime_version()}")


def _wasmtime_version() -> str:
    from importlib.metadata import version

    return version("wasmtime")


def test_pure_wheel_layout_runs_the_module(tmp_path: Path) -> None:
    """A package with crawlcheck.wasm and no library (the py3-none-any wheel)
    runs the module without being told to."""
    root = package_copy(tmp_path, wasm=True)
    r = run_python(INFO, root)
    assert r.returncode == 0, r.stderr
    assert f'"core": "wasm", "path": "{root / "crawlcheck" / "lib" / "crawlcheck.wasm"}"' in r.stdout
    # Nothing on stderr, at exit either (wasmtime's objects closed before
    # its module is torn down).
    assert r.stderr == ""


def test_nothing_fits_names_platform_and_what_was_looked_for(tmp_path: Path) -> None:
    root = package_copy(tmp_path, wasm=False)
    r = run_python(INFO, root)
    assert r.returncode != 0 and "LibraryError" in r.stderr
    lib = root / "crawlcheck" / "lib"
    assert f"no core library for this platform ({_lib.platform_name()})" in r.stderr
    assert f"looked for {lib / _lib.LIB_NAME} and the wasm core {lib / _lib.WASM_NAME}" in r.stderr
    assert "pip install 'crawlcheck[wasm]'" in r.stderr


def test_module_without_wasmtime_says_how_to_get_it(tmp_path: Path) -> None:
    root = package_copy(tmp_path, wasm=True)
    r = run_python("import sys; sys.modules['wasmtime'] = None; " + INFO, root)
    assert r.returncode != 0 and "LibraryError" in r.stderr
    assert "needs the wasmtime package" in r.stderr and "pip install 'crawlcheck[wasm]'" in r.stderr


def test_unknown_core_choice_is_refused(tmp_path: Path) -> None:
    r = run_python(INFO, package_copy(tmp_path, wasm=True), **{_lib.CORE_ENV: "jvm"})
    assert r.returncode != 0 and "CRAWLCHECK_CORE is 'jvm'" in r.stderr


def test_forced_wasm_without_a_module_is_refused(tmp_path: Path) -> None:
    root = package_copy(tmp_path, wasm=False)
    r = run_python(INFO, root, **{_lib.CORE_ENV: "wasm", _lib.WASM_ENV: str(tmp_path / "none.wasm")})
    assert r.returncode != 0 and f"the wasm core {tmp_path / 'none.wasm'} does not exist" in r.stderr


def test_edges_answer_as_the_native_library(wasm: WasmCore, native: _lib.Library) -> None:
    """Requests no vector holds, byte for byte the native library's answers:
    over the request cap (refused by length, nothing copied in) with and
    without attachments, an unknown and an empty op, attachments that are
    not UTF-8, an answer holding a NUL."""
    cap = int(crawlcheck.version()["limits"]["request_bytes"])
    big = b" " * (cap + 1)
    over: List[tuple] = [  # type: ignore[type-arg]
        ("canonicalize", big, None),
        ("canonicalize", b'{"json":{"$raw":0}}', (cap).to_bytes(4, "little") + b" " * cap),
    ]
    for op, req, att in over:
        got, want = wasm.call(op, req, att), native.call(op, req, att)
        assert got == want and b"input_too_large" in got, (got[:200], want[:200])
    # Nothing over the cap was copied in: the module's memory never held it.
    assert int(wasm._mem.data_len(wasm._store)) < cap
    cases: List[tuple] = [  # type: ignore[type-arg]
        ("canonicalize", b" " * (cap - 8), b"\x04\x00\x00\x00[1] "),
        ("no_such_op", b"{}", None),
        ("", b"{}", None),
        ("canonicalize", b'{"json":{"$raw":0}}', b"\x03\x00\x00\x00\xff\xfe\x00"),
        ("canonicalize", b'{"json":"{\\"a\\":\\"x\\\\u0000y\\"}"}', None),
        ("canonicalize", b"", b""),
    ]
    for op, req, att in cases:
        got, want = wasm.call(op, req, att), native.call(op, req, att)
        assert got == want, (op, len(req), got[:200], want[:200])


def test_threads_give_identical_answers(wasm: WasmCore) -> None:
    """The module runs one call at a time; 4 threads × 200 calls of a real
    check, serialized by its lock, give the same bytes."""
    from vectors import answers_from_threads, compact, members

    m = members((ROOT / "testdata" / "ops" / "continuity_check" / "example.json").read_bytes())
    req, want = compact(m["request"]), compact(m["response"])
    got, errors = answers_from_threads(lambda: wasm.call("continuity_check", req), threads=4, calls=200)
    assert not errors
    assert all(g == {want} for g in got)

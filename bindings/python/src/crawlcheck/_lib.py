"""Loading the core: libcrawlcheck.so through ctypes (docs/abi.md,
cshared/crawlcheck.h), or, where no wheel carries a native library,
crawlcheck.wasm under wasmtime (_wasm.py, the ``py3-none-any`` wheel).

Which one runs: the native library when the package holds one (or
``CRAWLCHECK_LIB`` names one), else the module when the package holds it (or
``CRAWLCHECK_WASM`` names one); ``CRAWLCHECK_CORE=native`` or ``=wasm`` insists
on one (the tests replay every vector through both). ``core_info()`` says
which runs.

The answer of a call is read as a pointer plus a length, never as a
``c_char_p``: a ``c_char_p`` result is converted to ``bytes`` at the first NUL
and the pointer is lost, so it could never be handed back to
``crawlcheck_free``. Here the pointer stays a ``c_void_p`` until its bytes are
copied out with ``ctypes.string_at(ptr, length)``, and then it is freed.

A Go runtime does not survive ``fork``: a child made after the library was
loaded would hang in its first call. The library remembers the process that
loaded it, and a call from any other process raises ``LibraryError`` at once.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Optional, Union

if TYPE_CHECKING:
    from ._wasm import WasmCore

from ._errors import CrawlcheckError

#: ABI versions this package speaks: 2, which adds ``crawlcheck_call_raw``
#: (documents as raw attachments) to ABI 1's JSON-only ``crawlcheck_call``.
SUPPORTED_ABI = (2,)

#: The environment variable that names another library file to load.
LIB_ENV = "CRAWLCHECK_LIB"

#: The environment variable that chooses the backend: native, wasm, or
#: unset (the native library if the package has one, else the module).
CORE_ENV = "CRAWLCHECK_CORE"

#: The environment variable that names another crawlcheck.wasm to run.
WASM_ENV = "CRAWLCHECK_WASM"

#: The module's file name in the pure wheel's ``crawlcheck/lib/``.
WASM_NAME = "crawlcheck.wasm"

#: The library's file name on each system: the wheel for a platform carries
#: the one its system loads (``make wheels``, docs/release.md).
LIB_NAMES = {"win32": "crawlcheck.dll", "darwin": "libcrawlcheck.dylib"}
LIB_NAME = LIB_NAMES.get(sys.platform, "libcrawlcheck.so")

#: The platforms a wheel with its own library is built for (``make wheels``).
WHEEL_PLATFORMS = (
    "Linux x86_64 and aarch64 (glibc 2.17+)",
    "macOS arm64 and x86_64 (12+)",
    "Windows amd64",
)


class LibraryError(CrawlcheckError, RuntimeError):
    """The core cannot be used: missing, of another ABI version, its runtime
    (wasmtime) missing, or loaded by another process (a child made by fork)."""


class Library:
    """One loaded libcrawlcheck.so."""

    #: Which backend this is (core_info()).
    kind = "native"
    runtime = "ctypes"

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            dll = ctypes.CDLL(path)
        except OSError as e:
            raise LibraryError(
                f"crawlcheck: cannot load the core library {path} on this platform "
                f"({platform_name()}): {e}. The wheel installed may be another platform's: "
                f"wheels with a library are built for {'; '.join(WHEEL_PLATFORMS)}."
            ) from e
        try:
            abi = dll.crawlcheck_abi_version
            call = dll.crawlcheck_call
            free = dll.crawlcheck_free
        except AttributeError as e:
            raise LibraryError(f"crawlcheck: {path} is not libcrawlcheck.so: {e}") from e
        abi.argtypes = []
        abi.restype = ctypes.c_uint32
        call.argtypes = [
            ctypes.c_char_p,
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ]
        call.restype = ctypes.c_void_p
        free.argtypes = [ctypes.c_void_p]
        free.restype = None
        self.abi = int(abi())
        if self.abi not in SUPPORTED_ABI:
            raise LibraryError(
                f"crawlcheck: {path} implements ABI version {self.abi}; this package "
                f"speaks {', '.join(map(str, SUPPORTED_ABI))}. Install the wheel built "
                "with its own library, or point CRAWLCHECK_LIB at a matching build."
            )
        try:
            raw = dll.crawlcheck_call_raw
        except AttributeError as e:
            raise LibraryError(f"crawlcheck: {path} says ABI {self.abi} but has no crawlcheck_call_raw") from e
        raw.argtypes = [
            ctypes.c_char_p,
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ]
        raw.restype = ctypes.c_void_p
        self._call = call
        self._call_raw = raw
        self._free = free
        self.pid = os.getpid()

    def _check_process(self) -> None:
        if os.getpid() != self.pid:
            raise LibraryError(
                f"crawlcheck: the core library was loaded by process {self.pid}; this "
                f"process ({os.getpid()}) was made from it by fork, and the Go runtime "
                "inside the library does not survive fork. Use the library only in the "
                "process that loaded it (multiprocessing: the 'spawn' or 'forkserver' "
                "start method)."
            )

    def call(self, op: str, request: bytes, attachments: Optional[bytes] = None) -> bytes:
        """Runs op and returns the envelope's bytes exactly as the core wrote them."""
        self._check_process()
        opb = op.encode("ascii", "replace")
        out_len = ctypes.c_size_t(0)
        # A bytes object's buffer is passed in place (ctypes hands C the
        # pointer to its data); the library copies nothing it keeps.
        if attachments is None:
            ptr = self._call(opb, request, len(request), ctypes.byref(out_len))
        else:
            ptr = self._call_raw(opb, request, len(request), attachments, len(attachments), ctypes.byref(out_len))
        if not ptr:
            raise LibraryError(f"crawlcheck: {op}: the library returned no answer")
        try:
            return ctypes.string_at(ptr, out_len.value)
        finally:
            self._free(ptr)


#: A loaded core: the native library or the module, the same call().
Core = Union[Library, "WasmCore"]

_lock = threading.Lock()
_loaded: Optional[Core] = None


def platform_name() -> str:
    """This platform as a person reads it: system, machine and C library, the
    three things a wheel's library must match."""
    system = {"win32": "Windows", "darwin": "macOS"}.get(sys.platform, platform.system() or sys.platform)
    libc, ver = platform.libc_ver()
    c = f", {libc} {ver}" if libc else ""
    return f"{system} {platform.machine()}{c}"


def default_path() -> str:
    """The library to load: $CRAWLCHECK_LIB, else the one bundled in the package."""
    env = os.environ.get(LIB_ENV)
    if env:
        return env
    return str(Path(__file__).resolve().parent / "lib" / LIB_NAME)


def wasm_path() -> str:
    """The module to run: $CRAWLCHECK_WASM, else the one bundled in the package."""
    env = os.environ.get(WASM_ENV)
    if env:
        return env
    return str(Path(__file__).resolve().parent / "lib" / WASM_NAME)


def missing_message(path: str, wasm: Optional[str] = None) -> str:
    """What a person reads when no core is found: the platform, what was
    looked for, and the ways out."""
    if os.environ.get(LIB_ENV):
        return f"crawlcheck: the core library is missing: {LIB_ENV} names {path}, which does not exist."
    also = f" and the wasm core {wasm}" if wasm else ""
    return (
        f"crawlcheck: no core library for this platform ({platform_name()}): looked for "
        f"{path}{also}. Wheels with a library are built for {'; '.join(WHEEL_PLATFORMS)}; "
        "elsewhere pip picks the pure wheel (py3-none-any), which runs crawlcheck.wasm under "
        "wasmtime: pip install 'crawlcheck[wasm]' where wasmtime has a wheel, or build the "
        f"library from the source tree (`make cshared`) and set {LIB_ENV} to it."
    )


def _load() -> Core:
    choice = os.environ.get(CORE_ENV) or "auto"
    if choice not in ("auto", "native", "wasm"):
        raise LibraryError(f"crawlcheck: {CORE_ENV} is {choice!r}: native, wasm, or unset for the one the package has")
    path = default_path()
    if choice == "native" or (choice == "auto" and (os.path.exists(path) or os.environ.get(LIB_ENV))):
        if not os.path.exists(path):
            raise LibraryError(missing_message(path))
        return Library(path)
    wasm = wasm_path()
    if not os.path.exists(wasm):
        if choice == "wasm":
            raise LibraryError(f"crawlcheck: {CORE_ENV}=wasm, but the wasm core {wasm} does not exist.")
        raise LibraryError(missing_message(path, wasm))
    from ._wasm import WasmCore

    return WasmCore(wasm, SUPPORTED_ABI)


def library() -> Core:
    """The process's core, loaded on first use."""
    global _loaded
    lib = _loaded
    if lib is not None:
        return lib
    with _lock:
        if _loaded is None:
            _loaded = _load()
        return _loaded


def core_info() -> Dict[str, object]:
    """Which core this process runs (loading it if need be): ``core`` is
    ``native`` (libcrawlcheck through ctypes) or ``wasm`` (crawlcheck.wasm
    under wasmtime), with its file, ABI version, runtime and this platform."""
    c = library()
    return {"core": c.kind, "path": c.path, "abi": c.abi, "runtime": c.runtime, "platform": platform_name()}

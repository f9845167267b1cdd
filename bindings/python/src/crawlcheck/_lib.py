"""Loading libcrawlcheck.so through ctypes (docs/abi.md, cshared/crawlcheck.h).

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
from typing import Optional

from ._errors import CrawlcheckError

#: ABI versions this package speaks: 2, which adds ``crawlcheck_call_raw``
#: (documents as raw attachments) to ABI 1's JSON-only ``crawlcheck_call``.
SUPPORTED_ABI = (2,)

#: The environment variable that names another library file to load.
LIB_ENV = "CRAWLCHECK_LIB"

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
    """The core library cannot be used: missing, of another ABI version, or
    loaded by another process (a child made by fork)."""


class Library:
    """One loaded libcrawlcheck.so."""

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


_lock = threading.Lock()
_loaded: Optional[Library] = None


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


def missing_message(path: str) -> str:
    """What a person reads when no library is found: the platform, what was
    looked for, and the ways out."""
    if os.environ.get(LIB_ENV):
        return f"crawlcheck: the core library is missing: {LIB_ENV} names {path}, which does not exist."
    return (
        f"crawlcheck: no core library for this platform ({platform_name()}): looked for "
        f"{path}. Wheels with a library are built for {'; '.join(WHEEL_PLATFORMS)}; "
        f"elsewhere build it from the source tree (`make cshared`) and set {LIB_ENV} to it."
    )


def library() -> Library:
    """The process's library, loaded on first use."""
    global _loaded
    lib = _loaded
    if lib is not None:
        return lib
    with _lock:
        if _loaded is None:
            path = default_path()
            if not os.path.exists(path):
                raise LibraryError(missing_message(path))
            _loaded = Library(path)
        return _loaded

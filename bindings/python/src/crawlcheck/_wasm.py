"""The second core backend: crawlcheck.wasm under wasmtime (PyPI ``wasmtime``).

It is the fallback for platforms no wheel carries a native library for
(Linux on musl, Windows on arm64: docs/release.md): the same module the JS
SDK runs, behind the same ``call(op, request, attachments)`` as the ctypes
backend, giving the same bytes (every vector of testdata/ is replayed through
both, ``make test-python``).

The module is a WASI preview 1 reactor (docs/abi.md, "WebAssembly"): it is
given no argument, environment variable, file or directory, only a clock,
random bytes and stderr for a Go runtime's fatal message. Its
``crawlcheck.sha256`` import answers "no host SHA-256" (``_sha256`` says why).

A module instance runs one call at a time: calls are serialized by a lock
(the native library is entered concurrently). As with the native library, a
process made by fork from the one that loaded the module gets LibraryError:
the wasmtime engine's state in a forked child is not something this package
has tested.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import threading
from importlib import metadata
from typing import TYPE_CHECKING, Mapping, Optional, Tuple

if TYPE_CHECKING:
    import wasmtime

from ._lib import LibraryError

#: The 32-bit lengths and addresses the module's exports take.
_U32 = 0xFFFFFFFF

#: The smallest buffer asked of the module's malloc (as the JS SDK does):
#: small requests reuse one buffer instead of one allocation each.
_MIN_BUFFER = 256


def _i32(n: int) -> int:
    """n (0 to 2**32-1) as the signed value wasmtime passes for an i32."""
    n &= _U32
    return n - (1 << 32) if n >= 1 << 31 else n


class WasmCore:
    """One instance of crawlcheck.wasm."""

    #: Which backend this is (core_info()).
    kind = "wasm"

    def __init__(self, path: str, supported_abi: tuple[int, ...]) -> None:
        try:
            import wasmtime
        except ImportError as e:
            raise LibraryError(
                f"crawlcheck: the wasm core ({path}) needs the wasmtime package, which is not "
                f"installed: pip install 'crawlcheck[wasm]' ({e})"
            ) from e
        self.path = path
        self.runtime = f"wasmtime {_wasmtime_version()}"
        config = wasmtime.Config()
        # Compiling the module takes seconds (Cranelift, about 3 s of CPU
        # here); wasmtime's own cache (its user cache directory, keyed by the
        # module's bytes and wasmtime's version) makes every later process
        # load it in well under one. Without a cache directory it compiles
        # every time, slower but the same.
        try:
            config.cache = True
        except wasmtime.WasmtimeError:
            pass
        engine = wasmtime.Engine(config)
        try:
            module = wasmtime.Module.from_file(engine, path)
        except (OSError, wasmtime.WasmtimeError) as e:
            raise LibraryError(f"crawlcheck: {path} is not a WebAssembly module wasmtime can compile: {e}") from e
        store = wasmtime.Store(engine)
        wasi = wasmtime.WasiConfig()
        # A Go runtime's fatal error (it recovers every panic of a call into
        # an envelope) is the one thing the module writes: where a person sees it.
        wasi.inherit_stderr()
        store.set_wasi(wasi)
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        i32 = wasmtime.ValType.i32()
        linker.define_func("crawlcheck", "sha256", wasmtime.FuncType([i32, i32, i32], [i32]), self._sha256)
        self._store = store
        try:
            inst = linker.instantiate(store, module)
        except wasmtime.WasmtimeError as e:
            raise LibraryError(f"crawlcheck: {path} cannot be instantiated (imports this host lacks?): {e}") from e
        ex = inst.exports(store)
        mem = ex.get("memory")
        if not isinstance(mem, wasmtime.Memory):
            raise LibraryError(f"crawlcheck: {path} is not crawlcheck.wasm: it exports no memory")
        self._mem = mem
        init, abi = _func(ex, "_initialize", path), _func(ex, "abi_version", path)
        self._malloc, self._free = _func(ex, "malloc", path), _func(ex, "free", path)
        self._call, self._call_raw = _func(ex, "call", path), _func(ex, "call_raw", path)
        init(store)
        self.abi = int(abi(store))
        if self.abi not in supported_abi:
            raise LibraryError(
                f"crawlcheck: {path} implements ABI version {self.abi}; this package speaks "
                f"{', '.join(map(str, supported_abi))}."
            )
        self._lock = threading.Lock()
        # wasmtime's objects free themselves in __del__, which at interpreter
        # exit may run after the wasmtime module's own globals are gone
        # ("Exception ignored ... 'NoneType' object is not callable" on
        # stderr); closed here first, in order, they do not.
        self._owned = (store, linker, module, engine)
        atexit.register(self._close)
        # Two buffers kept from call to call, as the JS SDK keeps them: the
        # op's name, and the request with its attachments behind it.
        self._op = (0, 0)
        self._data = (0, 0)
        self.pid = os.getpid()

    def _close(self) -> None:
        with self._lock:
            for m in self._owned:
                m.close()

    def _base(self) -> int:
        """The address of linear memory now (it moves when memory grows)."""
        return ctypes.addressof(self._mem.data_ptr(self._store).contents)

    def _in_memory(self, ptr: int, n: int) -> bool:
        return ptr + n <= int(self._mem.data_len(self._store))

    @staticmethod
    def _sha256(data_ptr: int, data_len: int, out_ptr: int) -> int:
        """crawlcheck.sha256: 0, "this host has no fast SHA-256", so the
        module hashes with its own code. hashlib is faster per byte, but each
        call from the module into Python through wasmtime costs more than
        the hash of a tool's few hundred bytes: measured, hash_tools of 1,000
        tools took 450 ms with hashlib behind the import and 35 ms without
        (27 ms through the native library)."""
        return 0

    def _reserve(self, buf: Tuple[int, int], n: int) -> Optional[Tuple[int, int]]:
        """A buffer of at least n bytes (buf itself when it is large enough),
        or None when the module's malloc refuses n: over the request cap."""
        ptr, size = buf
        if ptr != 0 and size >= n:
            return buf
        want = max(n, _MIN_BUFFER)
        if want > _U32:
            return None
        got = int(self._malloc(self._store, _i32(want))) & _U32
        if got == 0:
            return None
        if ptr != 0:
            self._free(self._store, _i32(ptr))
        return got, want

    def _check_process(self) -> None:
        if os.getpid() != self.pid:
            raise LibraryError(
                f"crawlcheck: the wasm core was loaded by process {self.pid}; this process "
                f"({os.getpid()}) was made from it by fork. Use the core only in the process "
                "that loaded it (multiprocessing: the 'spawn' or 'forkserver' start method)."
            )

    def call(self, op: str, request: bytes, attachments: Optional[bytes] = None) -> bytes:
        """Runs op and returns the envelope's bytes exactly as the core wrote them."""
        self._check_process()
        opb = op.encode("ascii", "replace")
        att = attachments if attachments is not None else b""
        total = len(request) + len(att)
        with self._lock:
            store = self._store
            op_buf = self._reserve(self._op, len(opb))
            if op_buf is None:
                raise LibraryError(f"crawlcheck: the module refused a buffer for an op name of {len(opb)} bytes")
            self._op = op_buf
            data = self._reserve(self._data, total)
            if data is not None:
                self._data = data
                base = self._base()
                ctypes.memmove(base + op_buf[0], opb, len(opb))
                ctypes.memmove(base + data[0], request, len(request))
                if att:
                    ctypes.memmove(base + data[0] + len(request), att, len(att))
                req_ptr, att_ptr = data[0], data[0] + len(request)
            else:
                # Over the cap (the module's malloc said so): nothing is
                # copied in. The module refuses the request by its lengths
                # before reading a byte; the addresses given are the end of
                # memory, so a module that read anyway would trap, not
                # answer (docs/abi.md, "Every build").
                base = self._base()
                ctypes.memmove(base + op_buf[0], opb, len(opb))
                req_ptr = att_ptr = int(self._mem.data_len(store)) & _U32
            # A length over 4 GiB cannot be said in 32 bits: the largest one
            # that can, still over the cap, is refused as input_too_large.
            rl, al = min(len(request), _U32), min(len(att), _U32)
            if attachments is None:
                packed = self._call(store, _i32(op_buf[0]), len(opb), _i32(req_ptr), _i32(rl))
            else:
                packed = self._call_raw(store, _i32(op_buf[0]), len(opb), _i32(req_ptr), _i32(rl), _i32(att_ptr), _i32(al))
            p = int(packed) & 0xFFFFFFFFFFFFFFFF
            ptr, n = p >> 32, p & _U32
            if not self._in_memory(ptr, n):
                raise LibraryError(f"crawlcheck: {op}: the module answered outside its memory")
            out = ctypes.string_at(self._base() + ptr, n)
            self._free(store, _i32(ptr))
            return out


def _func(exports: "Mapping[str, object]", name: str, path: str) -> "wasmtime.Func":
    import wasmtime

    f = exports.get(name)
    if not isinstance(f, wasmtime.Func):
        raise LibraryError(f"crawlcheck: {path} is not crawlcheck.wasm: it exports no function {name}")
    return f


def _wasmtime_version() -> str:
    try:
        return metadata.version("wasmtime")
    except metadata.PackageNotFoundError:  # a copy without its distribution's metadata
        return "(version unknown)"

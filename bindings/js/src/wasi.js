// A small WASI preview 1 for hosts without one (browsers): just what the Go
// runtime of crawlcheck.wasm asks for while it computes. The module reads no
// file, socket or environment; it needs a clock for its scheduler, random
// bytes for map seeds, a poll that never blocks, and somewhere to write a
// panic. Every other import the module names answers ENOSYS.

import { CrawlcheckError } from "./errors.js";

const ESUCCESS = 0;
const EBADF = 8;
const EINVAL = 28;
const ENOSYS = 52;

const ROOTS = new Set([0, 1, 2]);

/**
 * The wasi_snapshot_preview1 import object for module; memory() returns
 * the instance's memory once it exists.
 * @param {WebAssembly.Module} module
 * @param {() => WebAssembly.Memory} memory
 */
export function wasiShimImports(module, memory) {
  const view = () => new DataView(memory().buffer);
  const bytes = () => new Uint8Array(memory().buffer);
  const lines = { 1: "", 2: "" };
  const impl = {
    args_sizes_get(argc, bufSize) {
      view().setUint32(argc, 0, true);
      view().setUint32(bufSize, 0, true);
      return ESUCCESS;
    },
    args_get() {
      return ESUCCESS;
    },
    environ_sizes_get(count, bufSize) {
      view().setUint32(count, 0, true);
      view().setUint32(bufSize, 0, true);
      return ESUCCESS;
    },
    environ_get() {
      return ESUCCESS;
    },
    clock_time_get(id, _precision, out) {
      // 0 realtime, 1 monotonic; nanoseconds.
      let ns;
      if (id === 0) ns = BigInt(Date.now()) * 1000000n;
      else if (id === 1) ns = BigInt(Math.round(performance.now() * 1e6));
      else return EINVAL;
      view().setBigUint64(out, ns, true);
      return ESUCCESS;
    },
    random_get(ptr, len) {
      const b = bytes().subarray(ptr, ptr + len);
      // getRandomValues fills at most 65536 bytes at a time.
      for (let i = 0; i < b.length; i += 65536) crypto.getRandomValues(b.subarray(i, i + 65536));
      return ESUCCESS;
    },
    fd_write(fd, iovs, iovsLen, nwritten) {
      if (fd !== 1 && fd !== 2) return EBADF;
      const dv = view();
      let n = 0;
      let text = "";
      const td = new TextDecoder();
      for (let i = 0; i < iovsLen; i++) {
        const ptr = dv.getUint32(iovs + i * 8, true);
        const len = dv.getUint32(iovs + i * 8 + 4, true);
        text += td.decode(bytes().subarray(ptr, ptr + len), { stream: true });
        n += len;
      }
      // Whole lines go to the console: a Go panic is several writes.
      const all = lines[fd] + text;
      const cut = all.lastIndexOf("\n");
      if (cut >= 0) {
        (fd === 2 ? console.error : console.log)(all.slice(0, cut));
        lines[fd] = all.slice(cut + 1);
      } else {
        lines[fd] = all;
      }
      dv.setUint32(nwritten, n, true);
      return ESUCCESS;
    },
    fd_fdstat_get(fd, out) {
      if (!ROOTS.has(fd)) return EBADF;
      const dv = view();
      dv.setUint8(out, 2); // character device
      dv.setUint16(out + 2, 0, true);
      dv.setBigUint64(out + 8, 0n, true);
      dv.setBigUint64(out + 16, 0n, true);
      return ESUCCESS;
    },
    fd_prestat_get() {
      return EBADF; // no preopened directories
    },
    fd_close(fd) {
      return ROOTS.has(fd) ? ESUCCESS : EBADF;
    },
    // The Go runtime polls (and sleeps through poll_oneoff) in its scheduler
    // and around a collection; ENOSYS there is a fatal error. The module
    // waits on no file, and a browser cannot block: every clock
    // subscription fires at once, every fd subscription fails with EBADF.
    poll_oneoff(inPtr, outPtr, nsubs, neventsPtr) {
      const dv = view();
      for (let i = 0; i < nsubs; i++) {
        const sub = inPtr + i * 48;
        const ev = outPtr + i * 32;
        const tag = dv.getUint8(sub + 8);
        dv.setBigUint64(ev, dv.getBigUint64(sub, true), true); // userdata
        dv.setUint16(ev + 8, tag === 0 ? ESUCCESS : EBADF, true);
        dv.setUint8(ev + 10, tag);
        dv.setBigUint64(ev + 16, 0n, true);
        dv.setUint16(ev + 24, 0, true);
      }
      dv.setUint32(neventsPtr, nsubs, true);
      return ESUCCESS;
    },
    sched_yield() {
      return ESUCCESS;
    },
    proc_exit(code) {
      throw new CrawlcheckError(`crawlcheck: the module exited (${code})`);
    },
  };
  const out = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.module !== "wasi_snapshot_preview1" || imp.kind !== "function") continue;
    out[imp.name] = impl[imp.name] ?? (() => ENOSYS);
  }
  return out;
}

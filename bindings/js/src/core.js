// The crawlcheck core in JavaScript: crawlcheck.wasm (a WASI preview 1
// reactor) behind one synchronous call per op. Every rule lives in the
// module; this file only moves bytes in and out of it (docs/abi.md).
//
// Node and browsers run the module under the small WASI shim in wasi.js
// (node:wasi, still there as an option, prints an ExperimentalWarning on
// every run); Node gives it the host SHA-256 (crypto.createHash), a browser
// answers the SHA-256 import with 0, so the module hashes with its own code.

// The base error class is re-exported as itself and used here under a
// second name: web/build.mjs turns each import and each re-export into a
// const, so one name cannot be both.
import { CrawlcheckError as SdkError } from "./errors.js";
export { CrawlcheckError } from "./errors.js";
import { wasiShimImports } from "./wasi.js";

/** The request cap of the core (docs/abi.md, Limits): refused unread. */
export const MAX_REQUEST_BYTES = 64 << 20;

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });
const decLoose = new TextDecoder("utf-8");

const isNode = typeof process === "object" && process !== null && typeof process.versions?.node === "string";

/**
 * An error envelope of the core: `code` is one of the closed list of
 * docs/abi.md, `message` the core's text (it may quote a document's bytes:
 * show it through escapeText).
 */
export class CoreError extends SdkError {
  constructor(code, message, op) {
    super(`${op}: ${code}: ${message}`, { code });
    this.name = "CoreError";
    this.coreMessage = message;
    this.op = op;
  }
}

// The documented ops, each a method named in camelCase (hash_tools →
// hashTools). An op the loaded module does not know answers unknown_op.
export const OPS = [
  "approve",
  "canonicalize",
  "ci_plan",
  "ci_verdict",
  "continuity_check",
  "continuity_handoff",
  "convert_lock",
  "corrections_apply",
  "diff",
  "document_kind",
  "endpoint",
  "escape_text",
  "guard",
  "hash_tools",
  "instructions_diff",
  "lock_check",
  "log_consistency",
  "log_entry",
  "log_verify",
  "make_lock",
  "next_page",
  "pilot_batch",
  "pilot_queue",
  "public_key",
  "refusal",
  "replay_decision",
  "replay_state",
  "resign_correction",
  "resource_metadata",
  "rules",
  "scan",
  "scan_items",
  "session_step",
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
];

/**
 * JSON bytes placed in a request as they are (a handshake's serverInfo,
 * recorded as received): the caller has checked they are one JSON value.
 */
export class RawJSON {
  constructor(bytes) {
    this.bytes = bytes;
  }
}

/**
 * A document's bytes on their way through JSON.stringify: a Buffer's toJSON
 * (an array of every byte as a number) runs before the replacer sees the
 * value, and for a lockfile or page read from a file it was most of a warm
 * call's time; this wrapper has none.
 */
class Bytes {
  constructor(bytes) {
    this.bytes = bytes;
  }
}

/** v with each Uint8Array member wrapped in Bytes (a copy), or v itself. */
function shieldBytes(v) {
  if (v === null || typeof v !== "object" || v instanceof Uint8Array || v instanceof RawJSON || v instanceof Bytes) return v;
  let copy = null;
  for (const k of Object.keys(v)) {
    if (v[k] instanceof Uint8Array) {
      copy ??= Array.isArray(v) ? [...v] : { ...v };
      copy[k] = new Bytes(v[k]);
    }
  }
  return copy ?? v;
}

// RawJSON values travel as a mark replaced by their bytes.
const RAW_TAG = Array.from(globalThis.crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
const RAW_MARK = `crawlcheck-raw-json-${RAW_TAG}-`;
const RAW_MARK_RE = new RegExp(`"${RAW_MARK}(\\d+)"`, "g");

const camel = (op) => op.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

/** An instantiated module: one call at a time, synchronous. */
export class Core {
  #exports;
  #limits = null;
  #mem;
  #opBuf = { ptr: 0, size: 0 };
  #reqBuf = { ptr: 0, size: 0 };
  #attBuf = { ptr: 0, size: 0 };

  /** @internal */
  constructor(instance, info) {
    this.#exports = instance.exports;
    this.#mem = instance.exports.memory;
    /** abi_version() of the module. */
    this.abi = this.#exports.abi_version();
    /** Whether the module was offered the host SHA-256 (it may still decline a wrong one). */
    this.hostSha256 = info.hostSha256;
    /** "node:wasi" or "shim". */
    this.wasi = info.wasi;
    /** Whether requests may carry raw attachments (ABI ≥ 2, call_raw). */
    this.raw = this.abi >= 2 && typeof this.#exports.call_raw === "function";
  }

  /**
   * The hosts' limits (docs/abi.md, "The hosts' limits"): the version op's
   * limits member, read from the module once. Every bound this SDK applies
   * by default (a server frame, a check's deadline, the pages together, the
   * issuer's deadline and answer, a record log) is one of these, never a
   * number of its own.
   * @returns {import("./ops.js").VersionResult["limits"]}
   */
  get limits() {
    this.#limits ??= Object.freeze(this.version().limits);
    return this.#limits;
  }

  /**
   * The op's envelope for request bytes, as the module wrote them
   * (canonical JSON). attachments, ABI ≥ 2 only: the frames a request's
   * {"$raw": i} references name.
   * @param {string} op
   * @param {Uint8Array|string} request
   * @param {Uint8Array[]} [attachments]
   * @returns {Uint8Array}
   */
  callBytes(op, request, attachments) {
    const req = typeof request === "string" ? enc.encode(request) : request;
    const opBytes = enc.encode(op);
    let attLen = 0;
    if (attachments && attachments.length > 0) {
      if (!this.raw) throw new SdkError(`crawlcheck: attachments need ABI 2 (call_raw); this module is ABI ${this.abi}`);
      for (const a of attachments) attLen += 4 + a.length;
    }
    const opPtr = this.#write(this.#opBuf, opBytes);
    // An over-cap request is not copied in: the module refuses it by its
    // length. Its address is the end of memory, so a module that read it
    // anyway would trap instead of answering.
    const over = req.length + attLen > MAX_REQUEST_BYTES;
    let reqPtr = this.#mem.buffer.byteLength;
    if (!over) reqPtr = this.#write(this.#reqBuf, req);
    let packed;
    if (attachments && attachments.length > 0) {
      let attPtr = this.#mem.buffer.byteLength;
      if (!over) {
        attPtr = this.#reserve(this.#attBuf, attLen);
        const view = new Uint8Array(this.#mem.buffer, attPtr, attLen);
        const dv = new DataView(this.#mem.buffer, attPtr, attLen);
        let at = 0;
        for (const a of attachments) {
          dv.setUint32(at, a.length, true);
          view.set(a, at + 4);
          at += 4 + a.length;
        }
      }
      packed = this.#exports.call_raw(opPtr, opBytes.length, reqPtr, req.length, attPtr, attLen);
    } else {
      packed = this.#exports.call(opPtr, opBytes.length, reqPtr, req.length);
    }
    const p = BigInt.asUintN(64, packed);
    const ptr = Number(p >> 32n);
    const len = Number(p & 0xffffffffn);
    const out = new Uint8Array(len);
    out.set(new Uint8Array(this.#mem.buffer, ptr, len));
    this.#exports.free(ptr);
    return out;
  }

  /**
   * Calls op with a request object (or its bytes) and returns the envelope's
   * text. A Uint8Array anywhere in the object is a document's bytes: an
   * attachment on ABI 2, else a JSON string of those bytes (or, when they
   * are not UTF-8, {"base64": …}, the form pages take).
   */
  callText(op, request) {
    const [bytes, atts] = this.encode(request ?? {});
    return decLoose.decode(this.callBytes(op, bytes, atts));
  }

  /**
   * The op's result, as text: canonical JSON of the result member. Throws
   * CoreError on an error envelope.
   */
  callResultText(op, request) {
    const text = this.callText(op, request);
    if (text.startsWith('{"ok":true,"result":')) return text.slice(20, -1);
    throw errorOf(op, text);
  }

  /** The op's result object; throws CoreError carrying the core's code. */
  call(op, request) {
    return JSON.parse(this.callResultText(op, request));
  }

  /**
   * A string from a server, lockfile or record made safe to show a person:
   * the core's escape_text (control, bidi and invisible characters made
   * visible). Every such string in an error message goes through it.
   */
  shown(text) {
    return this.call("escape_text", { text: String(text) }).text;
  }

  /**
   * The bytes and attachments for a request: strings and bytes are sent as
   * they are; an object is serialized, its Uint8Array values made
   * attachments or strings.
   * @returns {[Uint8Array, Uint8Array[]]}
   */
  encode(request) {
    if (typeof request === "string") return [enc.encode(request), []];
    if (request instanceof Uint8Array) return [request, []];
    const atts = [];
    const raw = this.raw;
    const verbatim = [];
    let text = JSON.stringify(request, function (key, converted) {
      // The value before toJSON; its holder wrapped a Uint8Array in Bytes.
      let value = this[key];
      if (value instanceof Bytes) value = value.bytes;
      if (value instanceof RawJSON) {
        verbatim.push(decLoose.decode(value.bytes));
        return `${RAW_MARK}${verbatim.length - 1}`;
      }
      if (value instanceof Uint8Array) {
        if (raw) {
          atts.push(value);
          return { $raw: atts.length - 1 };
        }
        try {
          return dec.decode(value);
        } catch {
          return { base64: toBase64(value) };
        }
      }
      return shieldBytes(converted);
    });
    if (verbatim.length > 0) {
      // The marks are strings no JSON text of a request can otherwise hold:
      // a random tag, fixed for the process.
      text = text.replace(RAW_MARK_RE, (_, i) => verbatim[Number(i)]);
    }
    return [enc.encode(text), atts];
  }

  #reserve(buf, n) {
    if (buf.size < n || buf.ptr === 0) {
      if (buf.ptr !== 0) this.#exports.free(buf.ptr);
      const size = Math.max(n, 256);
      const ptr = this.#exports.malloc(size);
      if (ptr === 0) throw new SdkError(`crawlcheck: the module refused a buffer of ${size} bytes`);
      buf.ptr = ptr;
      buf.size = size;
    }
    return buf.ptr;
  }

  #write(buf, bytes) {
    const ptr = this.#reserve(buf, bytes.length);
    new Uint8Array(this.#mem.buffer, ptr, bytes.length).set(bytes);
    return ptr;
  }
}

for (const op of OPS) {
  Object.defineProperty(Core.prototype, camel(op), {
    value: function (request) {
      return this.call(op, request ?? {});
    },
    writable: true,
    configurable: true,
  });
}

function errorOf(op, text) {
  try {
    const env = JSON.parse(text);
    if (env && env.ok === false && env.error) return new CoreError(env.error.code, env.error.message, op);
  } catch {
    // fall through
  }
  return new CoreError("internal", `not an envelope: ${text.slice(0, 200)}`, op);
}

export function toBase64(bytes) {
  if (typeof Buffer !== "undefined") return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("base64");
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/**
 * A new instance of the module, apart from the one load() keeps.
 * @param {object} [options]
 * @param {Uint8Array|ArrayBuffer|WebAssembly.Module|URL|string} [options.wasm] the module or where it is, gzipped
 *   or not (default: the package's crawlcheck.wasm.gz)
 * @param {boolean} [options.hostSha256] offer the host SHA-256 (default: true in Node)
 * @param {"node"|"shim"} [options.wasi] which WASI (default: the package's shim, in Node too: node:wasi
 *   prints an ExperimentalWarning on stderr at every run, and the module needs only what the shim answers)
 * @param {(data: Uint8Array) => Uint8Array} [options.sha256] the host SHA-256 to offer (default: node:crypto's)
 */
export async function instantiate(options = {}) {
  const module = await compile(options.wasm);
  const wantNode = (options.wasi ?? "shim") === "node";
  if (wantNode && !isNode) throw new SdkError("crawlcheck: node:wasi outside Node");
  const hostHash = options.hostSha256 ?? isNode;
  const sha = !hostHash ? null : (options.sha256 ?? (await nodeSha256()));
  let memory = null;
  const imports = {};
  let wasi = null;
  if (wantNode) {
    const { WASI } = await import("node:wasi");
    wasi = new WASI({ version: "preview1", args: [], env: {}, returnOnExit: true });
    // Each import is called through a JavaScript function of its own:
    // bound straight to the module, Node 20's WASI functions crashed the
    // process (SIGSEGV) on a long-lived instance whose memory had grown,
    // at the first large call after many smaller ones; through a wrapper
    // they never did (bindings/js/test/vectors.test.js, "a long-lived
    // instance").
    const native = wasi.getImportObject().wasi_snapshot_preview1;
    imports.wasi_snapshot_preview1 = Object.fromEntries(Object.entries(native).map(([name, f]) => [name, (...args) => f(...args)]));
  } else {
    imports.wasi_snapshot_preview1 = wasiShimImports(module, () => memory);
  }
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.module === "crawlcheck" && imp.name === "sha256") {
      imports.crawlcheck = {
        sha256(dataPtr, dataLen, outPtr) {
          if (!sha) return 0;
          const buf = memory.buffer;
          const digest = sha(new Uint8Array(buf, dataPtr >>> 0, dataLen >>> 0));
          new Uint8Array(buf, outPtr >>> 0, 32).set(digest);
          return 1;
        },
      };
    } else if (!imports[imp.module]) {
      throw new SdkError(`crawlcheck: the module imports ${imp.module}.${imp.name}, which this host does not provide`);
    }
  }
  const instance = await WebAssembly.instantiate(module, imports);
  memory = instance.exports.memory;
  if (wasi) wasi.initialize(instance);
  else instance.exports._initialize();
  const hasImport = WebAssembly.Module.imports(module).some((i) => i.module === "crawlcheck" && i.name === "sha256");
  return new Core(instance, { hostSha256: hasImport && !!sha, wasi: wantNode ? "node:wasi" : "shim" });
}

async function nodeSha256() {
  if (!isNode) return null;
  const { createHash, hash } = await import("node:crypto");
  // crypto.hash (Node 20.12 on) makes no Hash object per call: half the
  // cost of createHash for the thousands of small hashes of a check.
  if (typeof hash === "function") return (bytes) => hash("sha256", bytes, "buffer");
  return (bytes) => createHash("sha256").update(bytes).digest();
}

async function compile(src) {
  if (src instanceof WebAssembly.Module) return src;
  if (src instanceof Uint8Array) return WebAssembly.compile(await inflated(src));
  if (src instanceof ArrayBuffer) return WebAssembly.compile(await inflated(new Uint8Array(src)));
  // In Node a string without a scheme is a path; elsewhere a URL relative
  // to the page.
  const isPath = isNode && typeof src === "string" && !/^[a-z][a-z0-9+.-]*:/i.test(src);
  const url = src === undefined ? new URL("../crawlcheck.wasm.gz", import.meta.url) : isPath ? null : new URL(src, globalThis.location?.href);
  if (isNode && (isPath || url.protocol === "file:")) {
    const { readFile } = await import("node:fs/promises");
    return WebAssembly.compile(await inflated(await readFile(isPath ? src : url)));
  }
  const resp = await fetch(url);
  if (!resp.ok) throw new SdkError(`crawlcheck: fetching ${url}: HTTP ${resp.status}`);
  if (typeof WebAssembly.compileStreaming === "function" && resp.headers.get("content-type") === "application/wasm" && !url.pathname.endsWith(".gz")) {
    return WebAssembly.compileStreaming(resp);
  }
  return WebAssembly.compile(await inflated(new Uint8Array(await resp.arrayBuffer())));
}

/**
 * The module's bytes: gzip inflated (the package ships crawlcheck.wasm.gz,
 * issue 36), anything else as it is, so a module given uncompressed, or
 * inflated already by a server that sent the .gz with Content-Encoding: gzip,
 * loads too. Node inflates with node:zlib, a browser with
 * DecompressionStream (every engine since 2023).
 */
async function inflated(bytes) {
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  if (!isNode && typeof DecompressionStream !== "function") {
    throw new SdkError("crawlcheck: this browser has no DecompressionStream to inflate crawlcheck.wasm.gz; pass options.wasm the module uncompressed");
  }
  try {
    if (isNode) {
      const { gunzipSync } = await import("node:zlib");
      return gunzipSync(bytes);
    }
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  } catch (e) {
    throw new SdkError(`crawlcheck: the module's gzip does not inflate: ${e?.message ?? e}`);
  }
}

let shared = null;

/**
 * The module, loaded once: later calls return the same instance (their
 * options are ignored).
 * @returns {Promise<Core>}
 */
export function load(options) {
  if (!shared) {
    shared = instantiate(options);
    shared.catch(() => {
      shared = null;
    });
  }
  return shared;
}

/**
 * The record's exact bytes inside a continuity_handoff result (callResultText):
 * canonical JSON, members sorted, so the record is followed by the session
 * member, and every quote inside a string is escaped, so the last
 * `,"session":"` ends it.
 * @param {string} answer
 * @returns {string}
 */
export function handoffRecordText(answer) {
  const head = '"record":';
  return answer.slice(answer.indexOf(head) + head.length, answer.lastIndexOf(',"session":"'));
}

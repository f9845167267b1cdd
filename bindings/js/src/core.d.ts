import type { ContinuityCheckResult, OpTypes, Ops } from "./ops.js";
export type * from "./ops.js";

/** A JSON value as the core reads and writes it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A request object: JSON, where any document field (a page, a lockfile, a
 * policy, a record, …) may be a Uint8Array holding the document's bytes.
 */
export type Request = { [key: string]: RequestValue };
export type RequestValue = null | boolean | number | string | Uint8Array | RawJSON | RequestValue[] | { [key: string]: RequestValue };

/** The request cap of the core (docs/abi.md, Limits). */
export declare const MAX_REQUEST_BYTES: number;
/** The version op's limits (docs/abi.md, "The hosts' limits"). */
export interface HostLimits {
  readonly answer_bytes: number;
  readonly check_timeout_ms: number;
  readonly issuer_answer_bytes: number;
  readonly issuer_timeout_ms: number;
  readonly pages: number;
  readonly pages_bytes: number;
  readonly record_log_bytes: number;
  readonly request_bytes: number;
}
/** The ops of docs/abi.md. */
export declare const OPS: readonly string[];
/** The record's exact bytes inside a continuity_handoff result (Core.callResultText). */
export declare function handoffRecordText(answer: string): string;

/**
 * The base class of every error the SDK throws for a reason of its own (a
 * TypeError stays a TypeError: an argument of the wrong kind).
 */
export declare class CrawlcheckError extends Error {
  constructor(message: string, options?: { code?: string | null; cause?: unknown });
  /**
   * The core's error code (one of ERROR_CODES, docs/abi.md) when an answer
   * of the core is the cause, this error's or its `cause`'s; else null.
   */
  readonly code: string | null;
}

/** An error envelope of the core. */
export declare class CoreError extends CrawlcheckError {
  /** One of the closed list of docs/abi.md: unknown_op, bad_request, lock_invalid, … */
  readonly code: string;
  /** The core's message (may quote a document: show it through Core.shown). */
  readonly coreMessage: string;
  readonly op: string;
}

/** JSON bytes placed in a request as they are. */
export declare class RawJSON {
  constructor(bytes: Uint8Array);
  readonly bytes: Uint8Array;
}

export interface LoadOptions {
  /** The module, its bytes, or where it is, gzipped or not (default: the crawlcheck.wasm.gz shipped in the package). */
  wasm?: Uint8Array | ArrayBuffer | WebAssembly.Module | URL | string;
  /** Offer the host SHA-256 to the module (default: true in Node, false in a browser). */
  hostSha256?: boolean;
  /** The host SHA-256 to offer (default: node:crypto's). */
  sha256?: (data: Uint8Array) => Uint8Array;
  /** Which WASI: the package's shim (the default, in Node too) or node:wasi (Node only; Node prints an ExperimentalWarning for it). */
  wasi?: "node" | "shim";
}

/** One entry of a record's observations. */
export interface Observation {
  observation: string;
  tool: string | null;
  part: string | null;
  effect: string;
  would?: string;
  detail: Json;
  override: boolean;
  exception?: Json;
}

/**
 * A crawlcheck-continuity-record (docs/continuity.md, The record): the
 * members continuity_check declares (ContinuityCheckResult, generated from
 * the op table), with the shape of an observation spelt out.
 */
export interface RecordJson extends Omit<ContinuityCheckResult, "observations"> {
  observations: Observation[];
}

export type Result = { [key: string]: Json };

/**
 * An instance of crawlcheck.wasm: synchronous, one call at a time. Its op
 * methods (hashTools, verifyLock, continuityHandoff, …) are declared in
 * ops.d.ts, generated from the core's op table.
 */
export declare class Core {
  /** abi_version() of the module. */
  readonly abi: number;
  /** The hosts' limits (docs/abi.md): version's limits member, read once; every default bound the SDK applies. */
  readonly limits: HostLimits;
  /** Whether requests may carry raw attachments (ABI ≥ 2). */
  readonly raw: boolean;
  /** Whether the module was offered the host SHA-256. */
  readonly hostSha256: boolean;
  readonly wasi: "node:wasi" | "shim";

  /** The op's result, typed by the op's name; throws CoreError carrying the core's code. */
  call<K extends keyof OpTypes>(op: K, request?: OpTypes[K]["request"] | string | Uint8Array): OpTypes[K]["result"];
  /** An op these declarations do not name (a newer module): its result untyped. */
  call<S extends string>(op: S extends keyof OpTypes ? never : S, request?: Request | string | Uint8Array): any;
  /** The op's result as canonical JSON text. */
  callResultText(op: string, request?: Request | string | Uint8Array): string;
  /** The envelope's text. */
  callText(op: string, request?: Request | string | Uint8Array): string;
  /** The envelope's bytes for request bytes (and, ABI ≥ 2, attachments). */
  callBytes(op: string, request: Uint8Array | string, attachments?: Uint8Array[]): Uint8Array;
  /** A string from a server or a file made safe to show a person (escape_text). */
  shown(text: string): string;
}

export interface Core extends Ops {}

/** A new instance, apart from the one load() keeps. */
export declare function instantiate(options?: LoadOptions): Promise<Core>;
/** The module, loaded once: later calls return the same instance. */
export declare function load(options?: LoadOptions): Promise<Core>;

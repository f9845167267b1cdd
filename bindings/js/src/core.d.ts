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
/** The ops of docs/abi.md. */
export declare const OPS: readonly string[];

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
  /** The module, its bytes, or where it is (default: the crawlcheck.wasm shipped in the package). */
  wasm?: Uint8Array | ArrayBuffer | WebAssembly.Module | URL | string;
  /** Offer the host SHA-256 to the module (default: true in Node, false in a browser). */
  hostSha256?: boolean;
  /** The host SHA-256 to offer (default: node:crypto's). */
  sha256?: (data: Uint8Array) => Uint8Array;
  /** Which WASI: node:wasi (default in Node) or the package's shim (default elsewhere). */
  wasi?: "node" | "shim";
}

export interface ToolSource {
  tools?: Json[];
  pages?: (string | Uint8Array | { base64: string })[];
  page_cap_reached?: boolean;
}

export interface VersionResult {
  abi: number;
  engine: string;
  ops: string[];
  rules_sha256: string;
}

export interface HashToolsResult {
  count: number;
  tools_sha256: string;
  tools: { name: string; sha256: string; parts: Record<string, string>; agentgate: Record<string, string> }[];
  agentgate_surface_hash: string;
  next_cursor: string | null;
  truncated?: Json;
  [key: string]: Json | undefined;
}

export interface VerifyLockResult {
  format: string;
  trust: "verified" | "operator_signed" | "unsigned" | "untrusted";
  reason: string | null;
  key_id: string | null;
  sha256: string;
  content_sha256: string;
  parts: "signed" | "unsigned" | "absent" | "ignored";
  count: number;
  tools_sha256: string;
  servers?: string[];
  server_name?: string | null;
  /** crawlcheck: the endpoint the lockfile pins (server.url), null when none. */
  url?: string | null;
}

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

/** A crawlcheck-continuity-record (docs/continuity.md, The record). */
export interface RecordJson {
  kind: "crawlcheck-continuity-record";
  v: 1;
  checked_at: string;
  mode: "observe" | "review" | "enforce";
  effect: string;
  tools: Record<string, string>;
  would?: { effect: string; tools: Record<string, string> };
  observations: Observation[];
  server: { [key: string]: Json };
  baseline: { [key: string]: Json };
  observed: { tools_sha256: string | null; count: number | null; pages: number; truncated: boolean; truncation: Json; failure: string | null; malformed: boolean };
  policy: { [key: string]: Json };
  exceptions: { applied: Json[]; expired: Json[] };
  issuer: Json;
  engine: { version: string; rules_sha256: string };
  prev_record_sha256?: string;
  record_sha256: string;
}

export type Result = { [key: string]: Json };

/** An instance of crawlcheck.wasm: synchronous, one call at a time. */
export declare class Core {
  /** abi_version() of the module. */
  readonly abi: number;
  /** Whether requests may carry raw attachments (ABI ≥ 2). */
  readonly raw: boolean;
  /** Whether the module was offered the host SHA-256. */
  readonly hostSha256: boolean;
  readonly wasi: "node:wasi" | "shim";

  /** The op's result; throws CoreError carrying the core's code. */
  call(op: string, request?: Request | string | Uint8Array): any;
  /** The op's result as canonical JSON text. */
  callResultText(op: string, request?: Request | string | Uint8Array): string;
  /** The envelope's text. */
  callText(op: string, request?: Request | string | Uint8Array): string;
  /** The envelope's bytes for request bytes (and, ABI ≥ 2, attachments). */
  callBytes(op: string, request: Uint8Array | string, attachments?: Uint8Array[]): Uint8Array;
  /** A string from a server or a file made safe to show a person (escape_text). */
  shown(text: string): string;

  version(request?: {}): VersionResult;
  rules(request?: {}): Result;
  canonicalize(request: { json: string | Uint8Array }): { canonical: string; sha256: string };
  hashTools(request: ToolSource): HashToolsResult;
  makeLock(request: ToolSource & { observed?: Request; format?: "crawlcheck" | "agentgate"; server?: Request; approved_at: string; name?: string; generated_by?: string; into?: string | Uint8Array }): { lock: string };
  verifyLock(request: { lock: string | Uint8Array | Request; now: string; key_directory?: string | Uint8Array | Request; operator_keys?: string[]; require_signed?: boolean; server_name?: string }): VerifyLockResult;
  signLock(request: { lock: string | Uint8Array | Request; private_key: string; key_id?: string }): { lock: string; sha256: string; key_id: string };
  publicKey(request: { private_key: string }): { public_key: string; key_id: string };
  convertLock(request: Request & { lock: string | Uint8Array | Request; to: "crawlcheck" | "agentgate" }): { lock: string; lost: string[] };
  diff(request: { old: Request | string | Uint8Array | Json[]; new: Request | string | Uint8Array | Json[] }): Result;
  lockCheck(request: Request): Result;
  continuityCheck(request: Request): RecordJson;
  /** continuity_check and what the host does with it: hand over exactly `tools`, call only `calls.names`. */
  continuityHandoff(request: Request): {
    record: RecordJson;
    session: "proceed" | "check_again" | "stop";
    tools: { name: string; tool: string }[];
    withheld: string[];
    calls: { names: string[]; unlisted: boolean };
    instructions: string | null;
  };
  verifyRecord(request: { record: string | Uint8Array | Request }): { valid: boolean; record_sha256: string; computed_sha256: string; reason: string | null };
  verifyChain(request: { records: string | Uint8Array }): { valid: boolean; count: number; broken_at?: number | null; reason?: string | null; head: string; torn_tail: boolean };
  guard(request: Request): Result;
  /** Why a record refuses a call or a session, worded by the core (refusal). */
  refusal(request: { record: Uint8Array | string | object; tool?: string }): { text: string };
  replayDecision(request: Request): Result;
  replayState(request: { file: string | Uint8Array | Request } | { seen_nonces: { nonce: string; expires_at: string }[] }): { seen_nonces: { nonce: string; expires_at: string }[]; file: string };
  signReceipt(request: Request): Result;
  approve(request: Request): { approved: boolean; lock: string | null; format?: string; server_name?: string | null; unnamed?: { tool: string | null; observation: string }[]; not_changed?: string[]; reason?: string };
  endpoint(request: { url: string } | { command: string[] }): { endpoint: string };
  escapeText(request: { text: string }): { text: string };
  nextPage(request: { page: string | Uint8Array | { base64: string }; followed?: string[]; page_cap?: number }): { cursor: string | null; stop: "list_end" | "page_cap_reached" | "cursor_repeated" | "response_malformed" | null; followed: string[]; page_cap_reached: boolean };
  scan(request: ToolSource): Result;
  logEntry(request: { document: string | Uint8Array | Request } | { entry: string }): { entry: string; leaf_hash: string };
  logVerify(request: ({ document: string | Uint8Array | Request } | { entry: string }) & { proof: string; now: string; key_directory: string | Uint8Array | Request; checkpoint?: string; consistency?: string[] }): LogVerdict & { included: boolean; index: number | null };
  logConsistency(request: { new: string; now: string; key_directory: string | Uint8Array | Request; checkpoint?: string; consistency?: string[] }): LogVerdict;
  /** A pilot's upload judged record by record (docs/issuer.md, "The pilot"). */
  pilotBatch(request: { records: string | Uint8Array; head?: string; logged_head?: string; known?: string[] }): {
    results: { record_sha256: string | null; status: "accepted" | "duplicate" | "edited" | "chain_gap"; reason: string | null; expected_prev_record_sha256: string | null }[];
    accepted: number;
    head: string | null;
    digests: (string | null)[];
    entry: string | null;
  };
}

/** A log op's answer (docs/log.md): valid, or the observation a check records. */
export interface LogVerdict {
  checkpoint: { origin: string; size: number; root_hash: string; key_id: string } | null;
  consistent: boolean | null;
  reason: string | null;
  keep: string | null;
  valid: boolean;
  observation: "log_proof_invalid" | "log_inconsistent" | null;
  detail: string | null;
}

/** A new instance, apart from the one load() keeps. */
export declare function instantiate(options?: LoadOptions): Promise<Core>;
/** The module, loaded once: later calls return the same instance. */
export declare function load(options?: LoadOptions): Promise<Core>;

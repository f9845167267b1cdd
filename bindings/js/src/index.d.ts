import { CrawlcheckError } from "./core.js";
import type { Core, RecordJson, Observation, LoadOptions, Json } from "./core.js";
export * from "./core.js";
/** The core's error codes, the closed list of docs/abi.md (generated from core/cerr). */
export declare const ERROR_CODES: readonly string[];

/**
 * A continuity record: every member under the record's own name
 * (record_sha256, prev_record_sha256, effect, …; RecordJson), and the
 * canonical line record_sha256 covers.
 */
export declare class ContinuityRecord {
  constructor(raw: string);
  /** The canonical JSON line, as logged. */
  readonly raw: string;
  /** The parsed record. */
  readonly json: RecordJson;
  /** Whether the whole tool list was read and parsed. */
  readonly complete: boolean;
}

/** A call the check refused, with the record that decided. */
export declare class ContinuityRefused extends CrawlcheckError {
  /** The tool withheld; null when the session is paused or denied. */
  readonly tool: string | null;
  readonly effect: string | null;
  readonly record: ContinuityRecord | null;
}

export interface ContinuityRecord extends Readonly<RecordJson> {}

/**
 * A prompt, resource, resource template or ui:// template the record does
 * not let through (issue 35): withPreflight's listPrompts, getPrompt,
 * listResources, listResourceTemplates and readResource answer only what
 * the record covers, each item the object the core wrote, and reject the
 * rest with this error, its message the core's words.
 */
export declare class ItemRefused extends CrawlcheckError {
  /** "ui_templates": a ui:// template that is not the one approved, or that no tool handed over names. */
  readonly list: "prompts" | "resources" | "resource_templates" | "ui_templates";
  /** The name, uri or uriTemplate asked for; "" for a whole list. */
  readonly key: string;
  /** The item's effect when the record withholds it, else null. */
  readonly effect: string | null;
  /** The check compared none of the list (the lockfile pins none, or it was not read). */
  readonly notCompared: boolean;
  readonly record: ContinuityRecord | null;
}

/**
 * The check could not be made or its result not kept (a lockfile that
 * cannot be read, a configuration the core refuses, a log that cannot be
 * written, a confirm the core does not approve); `code` is the core's when
 * the core refused.
 */
export declare class PreflightError extends CrawlcheckError {}

export interface PinnedKey {
  kid: string;
  public_key: string;
}

/** The service path (docs/receipts.md, "Service path for SDKs"). */
export interface IssuerOptions {
  /** The issuer's base URL; the API is under /api/v1/. */
  url: string;
  /** Keys pinned by the deployment; without keyDirectory the issuer's own directory is kept to these. */
  pinnedKeys?: PinnedKey[];
  /** One consultation's deadline in ms (default the core's limits.issuer_timeout_ms, 5000). */
  timeout?: number;
  fetch?: typeof fetch;
}

export interface ContinuityOptions {
  mode?: "observe" | "review" | "enforce";
  /** The operator's policy document (bytes, text or JSON). */
  policy?: Uint8Array | string | Json;
  expectedPolicyVersion?: string;
  /** base64 Ed25519 public keys of the operator: a signed baseline is then required. */
  operatorKeys?: string[];
  /** The issuer's key directory (bytes, text or JSON). */
  keyDirectory?: Uint8Array | string | Json;
  requireSignedBaseline?: boolean;
  /** The entry of an agentgate.lock. */
  serverName?: string;
  issuer?: IssuerOptions;
  /** Called with every record, after it is logged. */
  onRecord?: (record: ContinuityRecord) => void;
  /**
   * An append-only, fsynced, chained JSON-lines log of the records. Beside
   * it: the issuer replay state and, when the lockfile has a tlog-proof
   * beside it (`<lock>.tlog-proof`), the newest checkpoint of the issuer's
   * log (`<log>.log-checkpoint`, docs/log.md).
   */
  logPath?: string;
  /**
   * Uploads the record log to an issuer's pilot in the background
   * (docs/preflight.md, "The pilot upload"): needs logPath, never blocks or
   * fails a check; what the issuer acknowledged is kept in
   * `<log>.pilot-ack`. Backoff after a failure doubles from minBackoffMs
   * (default 1 s) to maxBackoffMs (default 5 min), the core's pilot_queue
   * answering the wait's bounds (whole milliseconds).
   */
  /** recordKey: the seed POST /api/v1/pilot?record_key=true answered; each upload is then signed with it. */
  pilot?: { url: string; id: string; token: string; recordKey?: string; minBackoffMs?: number; maxBackoffMs?: number };
  /** tools/list pages per check (default 100). */
  pageCap?: number;
  /**
   * Bytes of one frame the server sends (default the core's
   * limits.answer_bytes, 16 MiB): a longer one is cut off, the session closed, and the check
   * records server_unavailable.
   */
  maxAnswerBytes?: number;
  /** One check's deadline in ms: connect, handshake, every page (default the core's limits.check_timeout_ms, 10000). */
  timeout?: number;
  /** base64 Ed25519 seed: confirm() signs the new lockfile with it. */
  signingKey?: string;
  /** The records' clock (default: the system's). */
  now?: () => Date;
  /** Options for load() when the core is not loaded yet. */
  core?: LoadOptions;
}

export interface PreflightOptions {
  /** The approved lockfile's path (rewritten by confirm), or its bytes. */
  lock: string | URL | Uint8Array;
  continuity?: ContinuityOptions;
}

/** What withPreflight adds to a client. */
export interface Continuity {
  /** Every record of this session, oldest first. */
  readonly records: ContinuityRecord[];
  /** The newest record. */
  readonly record: ContinuityRecord | null;
  /** What the issuer gave the newest record (service path). */
  readonly consultation: Json | null;
  /**
   * The bounds the checks apply once connected (0 before): the caller's
   * maxAnswerBytes and timeout, else the core's limits; the issuer's
   * deadline (null without an issuer).
   */
  readonly limits: { maxAnswerBytes: number; timeout: number; issuerTimeout: number | null };
  /**
   * The server's instructions the model may be given: the newest record's
   * handoff (the bytes the core covered), undefined when it gives none
   * (not covered, changed, or the session does not proceed). withPreflight's
   * client.getInstructions() answers the same, never the SDK's copy.
   */
  readonly instructions: string | undefined;
  /** Re-approves the named tools' changes (a person's act); the new record. */
  confirm(...toolNames: string[]): Promise<ContinuityRecord>;
  /**
   * confirm that also approves a change of the server's instructions
   * (instructions_changed), whose word diff the person was shown.
   */
  confirmInstructions(...toolNames: string[]): Promise<ContinuityRecord>;
  /**
   * confirm that also approves the prompts, resources, resource templates
   * and ui:// templates as offered now (the core's approve_features): the
   * person was shown each changed item, escaped, with its scan.
   */
  confirmFeatures(...toolNames: string[]): Promise<ContinuityRecord>;
  /** Observes and checks again. */
  recheck(): Promise<ContinuityRecord>;
  /** The checked tools the record lets through. */
  tools(): Promise<Json[]>;
  /** Throws ContinuityRefused unless the record lets the tool through. */
  assertAllowed(name: string): Promise<ContinuityRecord>;
}

/** The minimum of an official MCP Client (1.x or 2.x) withPreflight wraps. */
export interface McpClientLike {
  connect(transport: any, options?: any): Promise<void>;
  listTools(params?: any, options?: any): Promise<any>;
  callTool(params: any, ...rest: any[]): Promise<any>;
  close(): Promise<void>;
}

/** Wraps a client (before connect) with the continuity check; the same client, changed in place. */
export declare function withPreflight<C extends McpClientLike>(client: C, options: PreflightOptions): C & { continuity: Continuity };

/** The endpoint string a record carries for a URL or a stdio command. */
export declare function endpointOf(cc: Core, request: { url: string } | { command: string[] }): string;

/** The record log (Node). */
export declare class RecordLog {
  constructor(path: string, cc: Core);
  readonly head: string;
  append(record: ContinuityRecord): void;
  close(): void;
}

export interface AdapterOptions extends ContinuityOptions {}

/** The LangChain adapter's options: the continuity options, the transport to connect a Client with, loadMcpTools' options. */
export interface LangChainAdapterOptions extends AdapterOptions {
  /** The transport to connect the Client (given before connect) with, the capture on it: the record covers the handshake. */
  transport?: unknown;
  /** loadMcpTools' options. */
  load?: Record<string, unknown>;
}

/**
 * An @openai/agents MCP server whose tools pass the check at every tool-list fetch. Wrapped before
 * connect, its connect() makes the session with the capture on (the record covers the handshake);
 * wrapped once connected, the check is blind to the handshake.
 */
export declare function withContinuity<S>(server: S, lock: string | URL | Uint8Array, options?: AdapterOptions): S & { continuity: Continuity };

/**
 * @langchain/mcp-adapters tools of one server, checked first; a refused call raises ContinuityRefused.
 * A Client before connect with options.transport is connected with the capture on (the record covers
 * the handshake); a connected Client or a MultiServerMCPClient is checked blind to the handshake.
 */
export declare function loadMcpToolsWithContinuity(serverName: string, client: any, lock: string | URL | Uint8Array, options?: LangChainAdapterOptions): Promise<any[]>;

/** Where the offset of a record log the pilot's issuer acknowledged is kept: beside the log. */
export function pilotAckPath(logPath: string): string;
/** One pass of the pilot upload: sends what the issuer has not acknowledged; answers how many lines it acknowledged. */
export function uploadPending(pilot: { url: string; id: string; token: string; recordKey?: string }, logPath: string, signal?: AbortSignal): Promise<number>;

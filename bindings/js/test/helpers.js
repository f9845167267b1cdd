// Shared by the end-to-end tests: the scenario MCP server (hosttest/mcpserver)
// over stdio and streamable HTTP, lockfiles pinned from a tool list, temp
// folders. The Go programs are built by scripts/pretest.js.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync, existsSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import assert from "node:assert/strict";
import { ContinuityRefused, load, endpointOf, withPreflight } from "../src/index.js";

export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const MCPSERVER = join(ROOT, "build", "mcpserver");
export const ISSUER = join(ROOT, "build", "issuer");
export const NOW = "2026-11-30T12:00:00.000Z";
export const now = () => new Date(NOW);

export function tempDir(t) {
  const d = mkdtempSync(join(tmpdir(), "crawlcheck-js-"));
  t?.after?.(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

export function writeScenario(dir, scenario, name = "scenario.json") {
  const p = join(dir, name);
  writeFileSync(p, JSON.stringify(scenario));
  return p;
}

/**
 * Connects client (a withPreflight client) over transport and answers the
 * raw record its preflight made: the session's, the client closed again,
 * or, when the connect was refused, the refusal's. A failure that is not a
 * refusal by a record fails the test.
 */
export async function connectRecord(client, transport) {
  try {
    await client.connect(transport);
    const raw = client.continuity.record.raw;
    await client.close();
    return raw;
  } catch (e) {
    assert.ok(e instanceof ContinuityRefused, `not a refusal: ${e}`);
    return e.record.raw;
  }
}

/** The stdio server parameters (command and args) of a scenario. */
export function stdioParams(scenarioPath, extra = []) {
  return { command: MCPSERVER, args: ["--scenario", scenarioPath, ...extra] };
}

/**
 * Spawns a test program that prints the address it listens on as its first
 * line of output; resolves {url, stop}. The child ends with the test.
 */
export async function spawnListening(t, program, args, what) {
  const child = spawn(program, args, { stdio: ["ignore", "pipe", "inherit"] });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  };
  t?.after?.(stop);
  const rl = createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    rl.once("line", resolve);
    child.once("exit", (c) => reject(new Error(`${what} exited (${c})`)));
  });
  return { url, stop };
}

/** Starts the server over HTTP; resolves {url, mutate(body), stop()}. */
export async function startHttp(t, scenarioPath, extra = []) {
  const { url, stop } = await spawnListening(t, MCPSERVER, ["--scenario", scenarioPath, "--listen", "127.0.0.1:0", ...extra], "mcpserver");
  const base = new URL(url);
  return {
    url,
    stop,
    async mutate(body) {
      const r = await fetch(new URL("/admin/mutate", base), { method: "POST", body: body === undefined ? "" : JSON.stringify(body) });
      if (r.status !== 200) throw new Error(`mutate: ${r.status} ${await r.text()}`);
      return r.json();
    },
  };
}

/** Applies a mutation to a server through its trigger file (stdio) and waits for it. */
export async function trigger(path, mutation) {
  writeFileSync(path + ".tmp", mutation === undefined ? "" : JSON.stringify(mutation));
  renameSync(path + ".tmp", path);
  for (let i = 0; i < 500 && existsSync(path); i++) await new Promise((r) => setTimeout(r, 10));
  if (existsSync(path)) throw new Error("trigger not applied");
}

/** Pins a tool list to a crawlcheck lockfile for the endpoint; returns its path. */
export async function pinLock(dir, tools, endpoint, name = "crawlcheck.lock.json") {
  const cc = await load();
  const { lock } = cc.makeLock({ tools, approved_at: "2026-11-01T00:00:00Z", server: { url: endpoint } });
  const p = join(dir, name);
  writeFileSync(p, lock);
  return p;
}

/** The endpoint a record names for stdio params or a URL. */
export async function endpointFor(x) {
  const cc = await load();
  return typeof x === "string" ? endpointOf(cc, { url: x }) : endpointOf(cc, { command: [x.command, ...x.args] });
}

export const TOOLS = [
  { name: "get_item", description: "Reads an item.", inputSchema: { type: "object", properties: { id: { type: "string" } } } },
  { name: "list_items", description: "Lists the items.", inputSchema: { type: "object" } },
  { name: "put_item", description: "Stores an item.", inputSchema: { type: "object" }, annotations: { destructiveHint: true } },
];

/** Starts the test issuer (its clock stopped at NOW); resolves {url, knobs(body), stop()}. */
export async function startIssuer(t, extra = []) {
  const { url, stop } = await spawnListening(t, ISSUER, ["--listen", "127.0.0.1:0", "--keys", join(ROOT, "testdata", "keys"), "--now", NOW, ...extra], "issuer");
  return {
    url,
    stop,
    async knobs(body) {
      const r = await fetch(url + "/admin/knobs", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      if (r.status !== 200) throw new Error(`knobs: ${r.status}`);
    },
  };
}

/** The crawlcheck CLI built by make; a check that withholds or stops (exit 1) still answers its output. */
export function crawlcheck(args) {
  try {
    return execFileSync(join(ROOT, "build", "crawlcheck"), args, { encoding: "utf8", maxBuffer: 1 << 30, stdio: ["ignore", "pipe", "ignore"] });
  } catch (e) {
    if (e.status === 1) return e.stdout;
    throw e;
  }
}

/**
 * The record withPreflight makes on the `major`.x client connecting to the
 * scenario at scenarioPath (stdio) or at endpoint (http), with the given
 * continuity options; the client is closed again.
 */
export async function recordOf(major, kind, scenarioPath, endpoint, lock, continuity) {
  const { Client, StdioClientTransport, StreamableHTTPClientTransport } = await sdk(major);
  const client = withPreflight(new Client({ name: "crawlcheck-test", version: "1.0.0" }), { lock, continuity });
  const transport =
    kind === "stdio" ? new StdioClientTransport({ command: MCPSERVER, args: ["--scenario", scenarioPath], stderr: "ignore" }) : new StreamableHTTPClientTransport(new URL(endpoint));
  await client.connect(transport);
  const rec = client.continuity.record;
  await client.close();
  return rec;
}

export const KEY_DIRECTORY = join(ROOT, "testdata", "keys", "test-directory.json");

/**
 * A 1.x client over the scenario server: kind "stdio" or "http". Returns
 * the pieces a test needs; the server and the client end with the test.
 */
export async function openSdk1(t, kind, scenario, { continuity = {}, lockTools = TOOLS, connect = true, extraArgs = [], major = 1 } = {}) {
  const { Client, StdioClientTransport, StreamableHTTPClientTransport } = await sdk(major);
  const dir = tempDir(t);
  const sc = writeScenario(dir, scenario);
  const triggerPath = join(dir, "trigger");
  const args = [...extraArgs, "--trigger", triggerPath];
  let transport;
  let endpoint;
  let server = null;
  if (kind === "stdio") {
    const params = stdioParams(sc, args);
    endpoint = await endpointFor(params);
    transport = new StdioClientTransport({ ...params, stderr: "ignore" });
  } else {
    server = await startHttp(t, sc, args);
    endpoint = await endpointFor(server.url);
    transport = new StreamableHTTPClientTransport(new URL(server.url));
  }
  const lockPath = lockTools === null ? null : await pinLock(dir, lockTools, endpoint);
  const client = withPreflight(new Client({ name: "crawlcheck-js-test", version: "1.0.0" }), {
    lock: continuity.lock ?? lockPath,
    continuity: { now, timeout: 5000, ...continuity },
  });
  t.after(() => client.close().catch(() => {}));
  if (connect) await client.connect(transport);
  return {
    client,
    transport,
    dir,
    lockPath,
    endpoint,
    server,
    mutate: (m) => (server ? server.mutate(m) : trigger(triggerPath, m)),
  };
}

/** The observation names of a record, in order. */
export const names = (rec) => rec.observations.map((o) => o.observation);

/** Waits until cond() holds (bounded), for a background re-check. */
export async function until(cond, what) {
  for (let i = 0; i < 500; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting: ${what}`);
}

/** The client classes of the official SDK, 1.x or 2.x. */
export async function sdk(major) {
  if (major === 1) {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    return { Client, StdioClientTransport, StreamableHTTPClientTransport };
  }
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
  return { Client, StdioClientTransport, StreamableHTTPClientTransport };
}

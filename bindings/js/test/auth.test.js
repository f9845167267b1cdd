// Servers behind a login (issue 32, item 1): the TypeScript SDK's own
// example streamable HTTP server with --oauth answers 401 with a
// WWW-Authenticate naming its resource metadata. withPreflight on SDK 1.x
// and 2.x records the core's `unauthorized` fault with that URL, byte for
// byte the record `crawlcheck check --json` writes for the same server at
// the same --now, and no header value (the challenge's other parameters, a
// header the client sent) reaches it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { ContinuityRefused, withPreflight } from "../src/index.js";
import { resourceMetadataOf } from "../src/capture.js";
import { load } from "../src/core.js";
import { TESTDATA } from "./vectors.js";
import { ROOT, NOW, TOOLS, crawlcheck, endpointFor, now, pinLock, sdk, spawnListening, tempDir } from "./helpers.js";

const EXAMPLE = join(ROOT, "bindings", "js", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "simpleStreamableHttp.js");

/** A loopback port nothing listens on now. */
async function freePort() {
  const srv = createServer();
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

/** Runs the example server with --oauth until it answers; stopped at the test's end. */
async function startExample(t) {
  assert.ok(existsSync(EXAMPLE), `the TypeScript SDK's example server is missing: cd bindings/js && npm ci`);
  const mcpPort = await freePort();
  const authPort = await freePort();
  const proc = spawn(process.execPath, [EXAMPLE, "--oauth"], { env: { ...process.env, MCP_PORT: String(mcpPort), MCP_AUTH_PORT: String(authPort) }, stdio: "ignore" });
  t.after(() => proc.kill());
  const url = `http://localhost:${mcpPort}/mcp`;
  for (const deadline = Date.now() + 20000; ; await new Promise((r) => setTimeout(r, 50))) {
    try {
      await fetch(url, { method: "GET" });
      break;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`the example server did not listen within 20 s: ${e}`);
    }
  }
  return { url, mcpPort };
}

const SECRET = "x-api-key-value-never-recorded";

test("a 401 with WWW-Authenticate: withPreflight on SDK 1.x and 2.x writes crawlcheck check's record, unauthorized with the resource metadata URL", { timeout: 120000 }, async (t) => {
  const dir = tempDir(t);
  const { url, mcpPort } = await startExample(t);
  const lock = await pinLock(dir, TOOLS, await endpointFor(url));
  const go = crawlcheck(["check", "--lock", lock, "--url", url, "--now", NOW, "--json"]).trim().split("\n");
  assert.equal(go.length, 1);
  const metadata = `http://localhost:${mcpPort}/.well-known/oauth-protected-resource/mcp`;
  const obs = JSON.parse(go[0]).observations;
  assert.equal(obs.length, 1);
  assert.equal(obs[0].observation, "server_unavailable");
  assert.ok(obs[0].detail.detail.includes("HTTP 401") && obs[0].detail.detail.endsWith(`; its resource metadata: ${metadata}`), obs[0].detail.detail);
  await refusedOnBothSDKs(url, lock, { "X-Api-Key": SECRET }, go, [SECRET, "invalid_token", "Missing Authorization header"]);
});

/**
 * withPreflight on SDK 1.x and 2.x connecting to url with headers: each
 * connect is refused by a record, the records are byte for byte go (what
 * crawlcheck check --json wrote), and none holds any of hidden.
 */
async function refusedOnBothSDKs(url, lock, headers, go, hidden) {
  for (const major of [1, 2]) {
    const { Client, StreamableHTTPClientTransport } = await sdk(major);
    const raws = [];
    const client = withPreflight(new Client({ name: "auth-driver", version: "1.0.0" }), {
      lock,
      continuity: { now, timeout: 10000, onRecord: (r) => raws.push(r.raw) },
    });
    let refused = null;
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    } catch (e) {
      refused = e;
    }
    await client.close().catch(() => {});
    assert.ok(refused instanceof ContinuityRefused, `SDK ${major}.x: connect was not refused by a record: ${refused?.stack ?? refused}`);
    assert.deepEqual(raws, go, `SDK ${major}.x`);
    for (const word of hidden) assert.ok(!raws[0].includes(word), `SDK ${major}.x: the record holds ${word}`);
  }
}

/** bearer-server.js (the SDK's requireBearerAuth) until it prints its URL; stopped at the test's end. */
async function startBearer(t) {
  return (await spawnListening(t, process.execPath, [join(ROOT, "bindings", "js", "test", "bearer-server.js")], "bearer-server.js")).url;
}

test("a 403 insufficient_scope from the SDK's requireBearerAuth: forbidden, as crawlcheck check --header writes it, the token nowhere", { timeout: 120000 }, async (t) => {
  const dir = tempDir(t);
  const url = await startBearer(t);
  const lock = await pinLock(dir, TOOLS, await endpointFor(url));
  const token = "narrow-token";
  const go = crawlcheck(["check", "--lock", lock, "--url", url, "--header", `Authorization: Bearer ${token}`, "--now", NOW, "--json"]).trim().split("\n");
  assert.equal(go.length, 1);
  const detail = JSON.parse(go[0]).observations[0].detail.detail;
  assert.ok(detail.includes("HTTP 403") && detail.endsWith(`; its resource metadata: ${url.replace(/\/mcp$/, "")}/.well-known/oauth-protected-resource/mcp`), detail);
  await refusedOnBothSDKs(url, lock, { Authorization: `Bearer ${token}` }, go, [token, "insufficient_scope", "Insufficient scope"]);
});

test("testdata/www-authenticate.json: the resource metadata URL the core keeps of each header, as fetch gives it", async () => {
  const cc = await load();
  const { cases } = JSON.parse(readFileSync(join(TESTDATA, "www-authenticate.json"), "utf8"));
  assert.ok(cases.length > 0);
  // fetch gives repeated lines joined by ", ", each byte one char (latin1).
  for (const c of cases) assert.equal(resourceMetadataOf(cc, Buffer.from(c.www_authenticate.join(", "), "utf8").toString("latin1")), c.resource_metadata, c.name);
});

// The issuer's transparency log on the JS host (docs/log.md, What a host
// does), as the Go preflight's TestSessionKeepsCheckpoint: the tlog-proof
// beside the lockfile is verified at every check, the newest checkpoint kept
// beside the record log, a checkpoint of another size reconciled by the
// issuer's consistency proof; a second test issuer with the same keys is
// another history of the same log (a fork): log_inconsistent, denied, and
// the first history stays kept.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { tempDir, writeScenario, startHttp, startIssuer, sdk, names, now, TOOLS, KEY_DIRECTORY } from "./helpers.js";
import { withPreflight } from "../src/index.js";

/** The test issuer reads the server and signs its lockfile; written with its tlog-proof. */
async function signedLock(iss, server, path) {
  const resp = await fetch(`${iss.url}/api/v1/mcp/lock?url=${encodeURIComponent(server.url)}`);
  const body = new Uint8Array(await resp.arrayBuffer());
  assert.equal(resp.status, 200, new TextDecoder().decode(body));
  const proof = Buffer.from(resp.headers.get("x-crawlcheck-log-proof") ?? "", "base64");
  assert.ok(proof.length > 0, "the signing answer carries a tlog-proof");
  writeFileSync(path, body);
  writeFileSync(`${path}.tlog-proof`, proof);
  return path;
}

async function check(t, server, iss, lock, logPath) {
  const { Client, StreamableHTTPClientTransport } = await sdk(1);
  const client = withPreflight(new Client({ name: "crawlcheck-js-test", version: "1.0.0" }), {
    lock,
    continuity: { keyDirectory: readFileSync(KEY_DIRECTORY), issuer: { url: iss.url, timeout: 3000 }, logPath, now, timeout: 5000 },
  });
  t.after(() => client.close().catch(() => {}));
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  const rec = client.continuity.record;
  await client.close();
  return rec;
}

test("the log checkpoint is kept beside the record log; larger and smaller trees are consistent; a fork is denied", async (t) => {
  const dir = tempDir(t);
  const server = await startHttp(t, writeScenario(dir, { tools: TOOLS }));
  const iss = await startIssuer(t);
  const logPath = join(dir, "records.jsonl");
  const keptPath = `${logPath}.log-checkpoint`;
  const first = await signedLock(iss, server, join(dir, "first.lock.json"));

  let rec = await check(t, server, iss, first, logPath);
  assert.equal(rec.effect, "proceed", names(rec).join());
  assert.equal(rec.json.log.included, true);
  assert.equal(rec.json.log.consistent, null);
  assert.equal(readFileSync(keptPath, "utf8"), rec.json.log.keep);
  const firstSize = rec.json.log.checkpoint.size;

  const second = await signedLock(iss, server, join(dir, "second.lock.json"));
  rec = await check(t, server, iss, second, logPath);
  assert.equal(rec.effect, "proceed", names(rec).join());
  assert.equal(rec.json.log.consistent, true);
  assert.ok(rec.json.log.checkpoint.size > firstSize);
  const newest = readFileSync(keptPath, "utf8");
  assert.equal(newest, rec.json.log.keep);

  rec = await check(t, server, iss, first, logPath);
  assert.equal(rec.effect, "proceed", names(rec).join());
  assert.equal(rec.json.log.consistent, true);
  assert.equal(rec.json.log.keep, newest, "the larger checkpoint stays kept");

  const other = await startIssuer(t);
  const forked = await signedLock(other, server, join(dir, "forked.lock.json"));
  rec = await check(t, server, other, forked, logPath);
  assert.equal(rec.effect, "deny");
  assert.ok(names(rec).includes("log_inconsistent"), names(rec).join());
  assert.equal(readFileSync(keptPath, "utf8"), newest, "a fork does not replace the kept checkpoint");

  // The issuer down: the smaller tree is not shown a prefix of the kept one.
  // Denied all the same, the reason in the core's words: not a fork proved.
  rec = await check(t, server, { url: "http://127.0.0.1:1" }, first, logPath);
  assert.equal(rec.effect, "deny");
  assert.ok(names(rec).includes("log_inconsistent"), names(rec).join());
  assert.equal(rec.json.log.reason, "consistency_unavailable");
  assert.equal(readFileSync(keptPath, "utf8"), newest);
});

test("another lockfile's proof is log_proof_invalid, and nothing is kept", async (t) => {
  const dir = tempDir(t);
  const server = await startHttp(t, writeScenario(dir, { tools: TOOLS }));
  const iss = await startIssuer(t);
  const first = await signedLock(iss, server, join(dir, "first.lock.json"));
  await server.mutate({ ops: [{ op: "edit", name: "list_items", set: { description: "Lists the items, newest first." } }] });
  const second = await signedLock(iss, server, join(dir, "second.lock.json"));
  writeFileSync(`${second}.tlog-proof`, readFileSync(`${first}.tlog-proof`));
  const logPath = join(dir, "records.jsonl");
  const rec = await check(t, server, iss, second, logPath);
  assert.equal(rec.effect, "deny");
  assert.ok(names(rec).includes("log_proof_invalid"), names(rec).join());
  assert.equal(rec.json.log.reason, "root_mismatch");
  assert.equal(existsSync(`${logPath}.log-checkpoint`), false);
});

// Pins only (docs/log.md): the log is judged by the pins and the directory
// fetched at each check, as the baseline is.
const PIN = { kid: "test-issuer-2026", public_key: "R2+nOTqJ24B+Bub9jH6p+WWS7P39GRzcQVzBDMKGvUQ=" };

async function checkPinned(t, server, url, lock) {
  const { Client, StreamableHTTPClientTransport } = await sdk(1);
  const client = withPreflight(new Client({ name: "crawlcheck-js-test", version: "1.0.0" }), {
    lock,
    continuity: { issuer: { url, pinnedKeys: [PIN], timeout: 3000 }, now, timeout: 5000 },
  });
  t.after(() => client.close().catch(() => {}));
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  const rec = client.continuity.record;
  await client.close();
  return rec;
}

test("pinned keys only: the proof verifies, another lockfile's is denied, the issuer down is on the record", async (t) => {
  const dir = tempDir(t);
  const server = await startHttp(t, writeScenario(dir, { tools: TOOLS }));
  const iss = await startIssuer(t);
  const first = await signedLock(iss, server, join(dir, "first.lock.json"));
  let rec = await checkPinned(t, server, iss.url, first);
  assert.equal(rec.effect, "proceed", names(rec).join());
  assert.equal(rec.json.log.included, true);

  // No directory to name the issuer's log: log_proof_invalid (no_log_origin)
  // beside service_unavailable, never a silent skip.
  rec = await checkPinned(t, server, "http://127.0.0.1:1", first);
  assert.equal(rec.effect, "deny");
  assert.ok(names(rec).includes("service_unavailable") && names(rec).includes("log_proof_invalid"), names(rec).join());
  assert.equal(rec.json.log.reason, "no_log_origin");

  await server.mutate({ ops: [{ op: "edit", name: "list_items", set: { description: "Lists the items, newest first." } }] });
  const second = await signedLock(iss, server, join(dir, "second.lock.json"));
  writeFileSync(`${second}.tlog-proof`, readFileSync(`${first}.tlog-proof`));
  rec = await checkPinned(t, server, iss.url, second);
  assert.equal(rec.effect, "deny");
  assert.ok(names(rec).includes("log_proof_invalid"), names(rec).join());
  assert.equal(rec.json.log.reason, "root_mismatch");
});

// The service path against crawlcheck-issuer itself (cmd/crawlcheck-issuer,
// fresh keys, its real clock), not the test issuer: a verified baseline from
// GET /api/v1/mcp/lock?url= of a real server, a receipt the guard accepts and
// its replay, the service down → the local fallback, and a whole key
// rotation the session follows itself: pinned keys, and the live directory
// it fetches at every check. The CLI and Go walk the same
// (cmd/crawlcheck-issuer/hosts_test.go).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ROOT, tempDir, writeScenario, startHttp, sdk, names, TOOLS } from "./helpers.js";
import { withPreflight } from "../src/index.js";

const BIN = join(ROOT, "build", "crawlcheck-issuer");

async function serve(t, keys) {
  const child = spawn(BIN, ["serve", "--dir", keys, "--listen", "127.0.0.1:0", "--allow-http", "--allow-private", "127.0.0.1/32"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  };
  t.after(stop);
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (c) => reject(new Error(`crawlcheck-issuer exited (${c})`)));
  });
  return { url, stop };
}

async function stack(t) {
  const dir = tempDir(t);
  const keys = join(dir, "keys");
  execFileSync(BIN, ["keys", "init", "--dir", keys, "--issuer", "issuer.test"]);
  // The operator's token: the server is on loopback, which only the
  // operator's requests may have the issuer read (docs/issuer.md, Trust model).
  token = execFileSync(BIN, ["operator-token", "--dir", keys], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  const server = await startHttp(t, writeScenario(dir, { tools: TOOLS }));
  return { dir, keys, server, iss: await serve(t, keys) };
}
let token = "";

async function body(resp, what) {
  const b = new Uint8Array(await resp.arrayBuffer());
  assert.equal(resp.status, 200, `${what}: ${resp.status} ${new TextDecoder().decode(b)}`);
  return b;
}
// As the operator: the stack's token.
const auth = () => ({ authorization: `Bearer ${token}` });
const get = async (url) => body(await fetch(url, { headers: auth() }), url);
const post = async (url, req) => body(await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...auth() }, body: JSON.stringify(req) }), url);

/**
 * One withPreflight session against st's server; its first record. keys is
 * {keyDirectory} (the operator's copy) or {pinnedKeys} (the session fetches
 * the issuer's live directory itself).
 */
async function check(t, st, lock, { keyDirectory, pinnedKeys }) {
  const { Client, StreamableHTTPClientTransport } = await sdk(1);
  const lockPath = join(tempDir(t), "crawlcheck.lock.json");
  writeFileSync(lockPath, lock);
  const client = withPreflight(new Client({ name: "crawlcheck-js-test", version: "1.0.0" }), {
    lock: lockPath,
    continuity: { keyDirectory, issuer: { url: st.iss.url, pinnedKeys, timeout: 3000 }, timeout: 5000 },
  });
  t.after(() => client.close().catch(() => {}));
  await client.connect(new StreamableHTTPClientTransport(new URL(st.server.url)));
  await client.close();
  return client.continuity.record;
}

const trust = (rec) => rec.json.baseline.trust + (rec.json.baseline.trust_reason ? `/${rec.json.baseline.trust_reason}` : "");

test("against crawlcheck-issuer: a verified baseline, a receipt guard accepts and replays, service down → local fallback", async (t) => {
  const st = await stack(t);
  const lock = await get(`${st.iss.url}/api/v1/mcp/lock?url=${encodeURIComponent(st.server.url)}`);
  const dir = await get(`${st.iss.url}/api/v1/keys`);
  const rec = await check(t, st, lock, { keyDirectory: dir });
  assert.equal(rec.effect, "proceed", names(rec).join());
  assert.equal(trust(rec), "verified");
  assert.equal(rec.json.issuer.policy_result, "proceed");
  assert.equal(rec.json.issuer.evidence_level, "C");
  const receipt = await get(`${st.iss.url}/api/v1/documents/${rec.json.issuer.receipt.sha256}`);
  const replay = JSON.parse(new TextDecoder().decode(await post(`${st.iss.url}/api/v1/preflight/replay`, { receipt: JSON.parse(new TextDecoder().decode(receipt)) })));
  assert.equal(replay.reproducible, true);

  st.iss.stop();
  await new Promise((r) => setTimeout(r, 200));
  const down = await check(t, st, lock, { keyDirectory: dir });
  assert.equal(down.effect, "pause");
  assert.ok(names(down).includes("service_unavailable") && names(down).includes("unchanged"), names(down).join());
  // Following the live directory, which cannot be fetched now: the pin
  // alone judges the baseline, and the record says why.
  const pinnedKeys = JSON.parse(new TextDecoder().decode(dir)).keys.map((k) => ({ kid: k.kid, public_key: k.public_key }));
  const pinned = await check(t, st, lock, { pinnedKeys });
  assert.equal(trust(pinned), "verified");
  assert.equal(pinned.effect, "pause");
  assert.ok(names(pinned).includes("service_unavailable"), names(pinned).join());
});

test("a key rotation the session follows itself: verified → overlap, resigned → key_retired for the old signing, verified for the resigned one", async (t) => {
  const st = await stack(t);
  const lock = await get(`${st.iss.url}/api/v1/mcp/lock?url=${encodeURIComponent(st.server.url)}`);
  // The operator pins the issuer's keys as it learns of them out of band
  // (keys directory on the issuer's machine); the session is handed no
  // directory and fetches GET /api/v1/keys itself at each check.
  let pins = [];
  const pinAll = () => {
    pins = JSON.parse(execFileSync(BIN, ["keys", "directory", "--dir", st.keys], { encoding: "utf8" })).keys.map((k) => ({ kid: k.kid, public_key: k.public_key }));
  };
  // Each step: the baseline's trust and the observation that judged it.
  const step = async (what, lockBytes, want, wantObs) => {
    const rec = await check(t, st, lockBytes, { pinnedKeys: pins });
    assert.equal(trust(rec), want, `${what}: ${names(rec).join()}`);
    assert.ok(names(rec).includes(wantObs), `${what}: ${names(rec).join()}, want ${wantObs}`);
    assert.ok(wantObs === "baseline_untrusted" || !names(rec).includes("baseline_untrusted"), `${what}: ${names(rec).join()}`);
    assert.ok(!names(rec).includes("service_unavailable"), `${what}: ${names(rec).join()}`);
  };
  pinAll();
  const first = pins[0].kid;
  await step("before", lock, "verified", "unchanged");
  execFileSync(BIN, ["keys", "rotate", "--dir", st.keys, "--overlap", "1h"]);
  pinAll();
  await new Promise((r) => setTimeout(r, 1100)); // the new key's not_before is to the second
  await step("overlap", lock, "verified", "unchanged");
  // Resigned during the overlap: a retired key vouches for nothing, resign
  // included (issue 37, F10).
  const resigned = await post(`${st.iss.url}/api/v1/mcp/lock/resign`, { lock: new TextDecoder().decode(lock) });
  execFileSync(BIN, ["keys", "retire", "--dir", st.keys, "--kid", first]);
  await step("retired", lock, "untrusted/retired_key", "key_retired");
  await step("resigned during the overlap", resigned, "verified", "unchanged");
  const late = await fetch(`${st.iss.url}/api/v1/mcp/lock/resign`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ lock: new TextDecoder().decode(lock) }) });
  assert.equal(late.status, 422, "a lockfile of the retired key resigned after retire");
});

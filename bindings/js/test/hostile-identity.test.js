// Cross-host identity against the red team's server (issue 22, F12): for
// every attack hosttest/attacker serves, the first check withPreflight makes
// on SDK 1.x and 2.x leaves the records `crawlcheck check` (the Go
// preflight) leaves, byte for byte, at the same clock; the attacks written
// over streamable HTTP (HTTP_ATTACKS: a decoy answer in an event of type
// "other" before the real one) the same on the SDKs' streamable HTTP
// transport against `crawlcheck check --url`. Python's
// tests/test_hostile_identity.py holds mcp 1.x and 2.x to the same records
// and bindings/go/preflight's TestHostileIdentity the Go preflight's Session,
// so the five hosts agree. And the server's instructions a framework reads
// (client.getInstructions(), client.continuity.instructions) are the core's
// handoff byte for byte, never the SDK's parse of the initialize answer: an
// attack whose lock pins a handshake (attacker --handshake) hides evil
// instructions beside the approved ones (attacker --instructions says what
// may be exposed).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { ContinuityRefused, load, withPreflight } from "../src/index.js";
import { NOW, ROOT, crawlcheck, endpointFor, now, pinLock, sdk, spawnListening, tempDir } from "./helpers.js";

const ATTACKER = join(ROOT, "build", "attacker");
const APPROVED = JSON.parse(execFileSync(ATTACKER, ["--tools"], { encoding: "utf8" }));
const ATTACKS = execFileSync(ATTACKER, ["--list"], { encoding: "utf8" }).trim().split("\n");
const says = (flag, attack) => JSON.parse(execFileSync(ATTACKER, [flag, attack], { encoding: "utf8" }));

/** The lockfile approving APPROVED and the attack's pinned handshake, as make_lock pins what a host saw. */
async function pinHandshake(dir, handshake, endpoint) {
  const cc = await load();
  const pages = [JSON.stringify({ tools: APPROVED })];
  const { lock } = cc.makeLock({ observed: { endpoint, handshake_result: JSON.stringify(handshake), pages }, approved_at: "2026-11-01T00:00:00Z" });
  const p = join(dir, "crawlcheck.lock.json");
  writeFileSync(p, lock);
  return p;
}

for (const attack of ATTACKS) {
  test(`${attack}: withPreflight on SDK 1.x and 2.x writes crawlcheck check's records`, { timeout: 120000 }, async (t) => {
    const dir = tempDir(t);
    const params = { command: ATTACKER, args: ["--attack", attack] };
    const handshake = says("--handshake", attack);
    const endpoint = await endpointFor(params);
    const lock = handshake === null ? await pinLock(dir, APPROVED, endpoint) : await pinHandshake(dir, handshake, endpoint);
    const handed = says("--instructions", attack) ?? undefined;
    const go = crawlcheck(["check", "--lock", lock, "--server", `${ATTACKER} --attack ${attack}`, "--now", NOW, "--json"]).trim().split("\n");
    for (const major of [1, 2]) {
      const { Client, StdioClientTransport } = await sdk(major);
      const raws = [];
      const client = withPreflight(new Client({ name: "identity-driver", version: "1.0.0" }), {
        lock,
        continuity: { now, timeout: 10000, onRecord: (r) => raws.push(r.raw) },
      });
      try {
        await client.connect(new StdioClientTransport({ ...params, stderr: "ignore" }));
      } catch (e) {
        assert.ok(e instanceof ContinuityRefused, `connect failed without a record: ${e?.stack ?? e}`);
      }
      const first = [...raws];
      const exposed = [client.getInstructions(), client.continuity.instructions];
      await client.close().catch(() => {});
      assert.deepEqual(first, go, `SDK ${major}.x`);
      assert.deepEqual(exposed, [handed, handed], `SDK ${major}.x: the instructions exposed are the core's handoff`);
    }
  });
}

// The attacks whose bite is in the streamable HTTP framing: each is served
// by `attacker --http` too.
const HTTP_ATTACKS = ["sse_other_event"];

/** The attack served over streamable HTTP until the test ends; its URL. */
async function httpAttacker(t, attack) {
  return (await spawnListening(t, ATTACKER, ["--attack", attack, "--http", "127.0.0.1:0"], "attacker")).url;
}

for (const attack of HTTP_ATTACKS) {
  test(`${attack} over streamable HTTP: withPreflight on SDK 1.x and 2.x writes crawlcheck check's records`, { timeout: 120000 }, async (t) => {
    const dir = tempDir(t);
    const url = await httpAttacker(t, attack);
    const lock = await pinLock(dir, APPROVED, await endpointFor(url));
    const go = crawlcheck(["check", "--lock", lock, "--url", url, "--now", NOW, "--json"]).trim().split("\n");
    for (const major of [1, 2]) {
      const { Client, StreamableHTTPClientTransport } = await sdk(major);
      const raws = [];
      const client = withPreflight(new Client({ name: "identity-driver", version: "1.0.0" }), {
        lock,
        continuity: { now, timeout: 10000, onRecord: (r) => raws.push(r.raw) },
      });
      try {
        await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      } catch (e) {
        assert.ok(e instanceof ContinuityRefused, `connect failed without a record: ${e?.stack ?? e}`);
      }
      const first = [...raws];
      await client.close().catch(() => {});
      assert.deepEqual(first, go, `SDK ${major}.x`);
    }
  });
}

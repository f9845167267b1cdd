// Cross-host identity against the red team's server (issue 22, F12): for
// every attack hosttest/attacker serves, the first check withPreflight makes
// on SDK 1.x and 2.x leaves the records `crawlcheck check` (the Go
// preflight) leaves, byte for byte, at the same clock. Python's
// tests/test_hostile_identity.py holds mcp 1.x and 2.x to the same records
// and bindings/go/preflight's TestHostileIdentity the Go preflight's Session,
// so the five hosts agree.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { ContinuityRefused, withPreflight } from "../src/index.js";
import { NOW, ROOT, crawlcheck, endpointFor, now, pinLock, sdk, tempDir } from "./helpers.js";

const ATTACKER = join(ROOT, "build", "attacker");
const APPROVED = JSON.parse(execFileSync(ATTACKER, ["--tools"], { encoding: "utf8" }));
const ATTACKS = execFileSync(ATTACKER, ["--list"], { encoding: "utf8" }).trim().split("\n");

for (const attack of ATTACKS) {
  test(`${attack}: withPreflight on SDK 1.x and 2.x writes crawlcheck check's records`, { timeout: 120000 }, async (t) => {
    const dir = tempDir(t);
    const params = { command: ATTACKER, args: ["--attack", attack] };
    const lock = await pinLock(dir, APPROVED, await endpointFor(params));
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
      await client.close().catch(() => {});
      assert.deepEqual(first, go, `SDK ${major}.x`);
    }
  });
}

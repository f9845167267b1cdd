// The red team's attacks (hosttest/attacker) against withPreflight on both
// SDK majors: whatever the server sends, every check leaves a record (each
// one logged), a storm of list_changed gives a bounded number of them, and
// in enforce mode no call of a tool the server had already served changed
// reaches it (the attacker logs every tools/call with whether its tool was
// tainted). `make attack` runs them at length (CRAWLCHECK_ATTACK_LONG=1:
// 30 s of idling per attack instead of 1.5 s).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ContinuityRefused, withPreflight } from "../src/index.js";
import { ROOT, endpointFor, now, pinLock, sdk, tempDir } from "./helpers.js";

const LONG = process.env.CRAWLCHECK_ATTACK_LONG === "1";
const ATTACKER = join(ROOT, "build", "attacker");
const APPROVED = JSON.parse(execFileSync(ATTACKER, ["--tools"], { encoding: "utf8" }));
const ATTACKS = execFileSync(ATTACKER, ["--list"], { encoding: "utf8" }).trim().split("\n");
const IDLE_MS = LONG ? 30000 : 1500;
// A storm's records while idle (0 s, 1 s, 3 s, 7 s, 15 s, ...) plus one per call.
const MAX_RECORDS = LONG ? 16 : 12;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function lines(path) {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
}

for (const major of [1, 2]) {
  for (const attack of ATTACKS) {
    test(`SDK ${major}.x against ${attack}: every check has a record, no tainted call reaches the server`, { timeout: IDLE_MS + 60000 }, async (t) => {
      const { Client, StdioClientTransport } = await sdk(major);
      const dir = tempDir(t);
      const callLog = join(dir, "calls.jsonl");
      const logPath = join(dir, "records.jsonl");
      const params = { command: ATTACKER, args: ["--attack", attack, "--calls", callLog] };
      const lock = await pinLock(dir, APPROVED, await endpointFor(params));
      const records = [];
      const client = withPreflight(new Client({ name: "attack-driver", version: "1.0.0" }), {
        lock,
        continuity: { now, timeout: 3000, logPath, onRecord: (r) => records.push(r) },
      });
      t.after(() => client.close().catch(() => {}));
      let connected = true;
      try {
        await client.connect(new StdioClientTransport({ ...params, stderr: "ignore" }));
      } catch (e) {
        connected = false;
        assert.ok(e instanceof ContinuityRefused, `connect failed without a record: ${e?.stack ?? e}`);
      }
      assert.ok(records.length >= 1, "the check left no record");
      if (connected) {
        const callAll = async () => {
          for (const tool of APPROVED) await client.callTool({ name: tool.name, arguments: {} }).catch(() => {});
        };
        await callAll();
        await sleep(IDLE_MS);
        await callAll();
        assert.ok(records.length <= MAX_RECORDS, `${records.length} records`);
        await client.close();
      }
      assert.deepEqual(
        lines(logPath).map((r) => r.record_sha256),
        records.map((r) => r.record_sha256),
        "every record is logged, in order",
      );
      const tainted = lines(callLog).filter((c) => c.tainted);
      assert.deepEqual(tainted, [], "a call of a tainted tool reached the server");
    });
  }
}

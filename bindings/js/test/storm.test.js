// A server that announces a change after every listing (issue 22, F8): the
// background re-checks are coalesced and rate-limited (RECHECK_MIN_MS,
// doubling while the storm lasts), so an idle client makes a handful of
// records, not hundreds a second; a call still re-checks at once; and the
// records kept in memory are bounded while the log keeps every one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_KEPT_RECORDS, RECHECK_MAX_MS } from "../src/preflight.js";
import { openSdk1, tempDir, TOOLS } from "./helpers.js";

// list_changed after each of the first 2,000 listings; the edit keeps the
// tool's bytes, so every record is "unchanged".
const STORM = Array.from({ length: 2000 }, (_, i) => ({
  after_lists: i + 1,
  notify: true,
  ops: [{ op: "edit", name: "list_items", set: { description: "Lists the items." } }],
}));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("a list_changed storm gives a bounded number of records while idle; a call still checks first", async (t) => {
  const { client } = await openSdk1(t, "stdio", { tools: TOOLS, mutations: STORM });
  await sleep(3500);
  // The first check, then background re-checks at about 0 s, 1 s and 3 s.
  const idle = client.continuity.records.length;
  assert.ok(idle >= 2 && idle <= 5, `records after 3.5 s of a storm: ${idle}`);
  for (const r of client.continuity.records) assert.equal(r.effect, "proceed");
  // The records say the storm: the first check and the first re-check (run at
  // once, for one notification) are unmarked, each held-back one carries
  // storm with the notifications it covers and how long it was held back.
  const [first, ...rechecks] = client.continuity.records;
  assert.equal(first.storm, undefined);
  assert.equal(rechecks[0].storm, undefined);
  const marked = rechecks.filter((r) => r.storm !== undefined);
  assert.ok(marked.length >= 1 && marked.length === rechecks.length - 1, `storm records: ${marked.length} of ${rechecks.length} re-checks`);
  for (const { storm } of marked) {
    assert.deepEqual(Object.keys(storm).sort(), ["coalesced", "held_back_ms"]);
    assert.ok(storm.coalesced >= 1, `coalesced ${storm.coalesced}`);
    assert.ok(storm.held_back_ms > 0 && storm.held_back_ms <= RECHECK_MAX_MS, `held back ${storm.held_back_ms} ms`);
  }

  // The server announced a change after the last listing: the call is judged
  // by a check made after it, without waiting out the hold-off.
  const before = client.continuity.record.record_sha256;
  const started = Date.now();
  assert.equal((await client.callTool({ name: "list_items", arguments: {} })).content[0].text, "called list_items");
  assert.notEqual(client.continuity.record.record_sha256, before);
  // The hold-off is 4 s by now; the call did not wait it out.
  assert.ok(Date.now() - started < 3000, "the call re-checked at once");
});

test(`continuity.records keeps the newest ${MAX_KEPT_RECORDS}; the log keeps every record`, async (t) => {
  const logPath = join(tempDir(t), "records.jsonl");
  const { client } = await openSdk1(t, "stdio", { tools: TOOLS, list_changed: false }, { continuity: { logPath } });
  const c = client.continuity;
  for (let i = 0; i < MAX_KEPT_RECORDS + 10; i++) await c.recheck();
  assert.equal(c.records.length, MAX_KEPT_RECORDS);
  assert.equal(c.records.at(-1).record_sha256, c.record.record_sha256);
  c.records.slice(1).forEach((r, i) => assert.equal(r.prev_record_sha256, c.records[i].record_sha256));
  const lines = readFileSync(logPath, "utf8").trim().split("\n");
  assert.equal(lines.length, MAX_KEPT_RECORDS + 11);
  assert.equal(JSON.parse(lines.at(-1)).record_sha256, c.record.record_sha256);
});

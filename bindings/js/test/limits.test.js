// Bounded answers (issue 10, items 3 and 4): a frame the server sends past
// continuity.maxAnswerBytes is cut off, the session is broken there, and the
// check still leaves a record (server_unavailable, effect pause), worded by
// the core as for the Go preflight: the record equals `crawlcheck check`'s.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openSdk1, until, TOOLS, MCPSERVER, NOW, now, tempDir, startHttp, endpointFor, crawlcheck, recordOf } from "./helpers.js";
import { readCapped } from "../src/bounded.js";

const LIMIT = 64 << 10;
const DETAIL = `the server sent an answer of more than ${LIMIT} bytes: not read further`;
// One tools/list page of about 200 KiB: over LIMIT, under 1 MiB.
const BIG = [{ name: "big", description: "a".repeat(200 << 10), inputSchema: { type: "object" } }];

const cases = [
  ["stdio", {}],
  ["http", {}],
  ["http", { http_sse: true }],
];

for (const [kind, extra] of cases) {
  const label = `${kind}${extra.http_sse ? " (event stream)" : ""}`;
  for (const major of [1, 2]) {
    test(`SDK ${major}.x, ${label}: an answer over maxAnswerBytes leaves a record, pauses and breaks the session`, async (t) => {
      const records = [];
      const s = await openSdk1(t, kind, { ...extra, tools: BIG }, { major, lockTools: TOOLS, continuity: { maxAnswerBytes: LIMIT, onRecord: (r) => records.push(r) } });
      const rec = s.client.continuity.record;
      assert.equal(records.length, 1);
      assert.equal(rec.observed.failure, "server_unavailable");
      assert.deepEqual(unavailable(rec.raw), [DETAIL]);
      assert.equal(rec.effect, "pause");
      await until(() => s.client.transport === undefined, "the session to close");
    });
  }
  test(`${label}: the same answer under maxAnswerBytes is read`, async (t) => {
    const s = await openSdk1(t, kind, { ...extra, tools: BIG }, { lockTools: BIG, continuity: { maxAnswerBytes: 1 << 20 } });
    const rec = s.client.continuity.record;
    assert.equal(rec.observed.failure ?? "", "");
    assert.equal(rec.effect, "proceed");
  });
}

for (const kind of ["stdio", "http"]) {
  test(`${kind}: the record of an answer over the limit equals crawlcheck check's, byte for byte`, async (t) => {
    const dir = tempDir(t);
    const approved = join(dir, "approved.json");
    writeFileSync(approved, JSON.stringify(TOOLS));
    const sc = join(dir, "scenario.json");
    writeFileSync(sc, JSON.stringify({ handshake: "initialize", tools: BIG }));
    let endpoint;
    if (kind === "stdio") {
      endpoint = await endpointFor({ command: MCPSERVER, args: ["--scenario", sc] });
    } else {
      endpoint = (await startHttp(t, sc)).url;
    }
    const lock = join(dir, "crawlcheck.lock.json");
    crawlcheck(["lock", "--tools", approved, "--url", endpoint, "--now", "2026-11-01T00:00:00Z", "-o", lock]);
    const source = kind === "stdio" ? ["--server", `${MCPSERVER} --scenario ${sc}`] : ["--url", endpoint];
    const goRecord = crawlcheck(["check", "--lock", lock, ...source, "--now", NOW, "--max-input", String(LIMIT), "--json"]).trim();
    assert.deepEqual(unavailable(goRecord), [DETAIL]);
    for (const major of [1, 2]) {
      const rec = await recordOf(major, kind, sc, endpoint, lock, { now, maxAnswerBytes: LIMIT });
      assert.equal(rec.raw, goRecord, `SDK ${major}.x record differs from the Go preflight's`);
    }
  });
}

// A 12 MiB page with the default limits (16 MiB): over the SDK's own
// 10 MiB stdio read buffer, which would otherwise close the connection
// first (issue 22, F12); the record equals crawlcheck check's.
test("stdio: a 12 MiB page is read under the default limit, as crawlcheck check reads it", { timeout: 300000 }, async (t) => {
  const dir = tempDir(t);
  const approved = join(dir, "approved.json");
  writeFileSync(approved, JSON.stringify(TOOLS));
  const sc = join(dir, "scenario.json");
  writeFileSync(sc, JSON.stringify({ handshake: "initialize", tools: [{ name: "big", description: "a".repeat(12 << 20), inputSchema: { type: "object" } }] }));
  const endpoint = await endpointFor({ command: MCPSERVER, args: ["--scenario", sc] });
  const lock = join(dir, "crawlcheck.lock.json");
  crawlcheck(["lock", "--tools", approved, "--url", endpoint, "--now", "2026-11-01T00:00:00Z", "-o", lock]);
  const goRecord = crawlcheck(["check", "--lock", lock, "--server", `${MCPSERVER} --scenario ${sc}`, "--now", NOW, "--json"]).trim();
  assert.equal(JSON.parse(goRecord).observed.failure ?? null, null, goRecord.slice(0, 300));
  for (const major of [1, 2]) {
    const rec = await recordOf(major, "stdio", sc, endpoint, lock, { now, timeout: 120000 });
    assert.equal(rec.raw, goRecord, `SDK ${major}.x record differs from the Go preflight's`);
  }
});

test("stdio: after a 12 MiB page the SDK's session still works (its own read buffer no longer drops the frame)", { timeout: 300000 }, async (t) => {
  const big = [{ name: "big", description: "a".repeat(12 << 20), inputSchema: { type: "object" } }];
  for (const major of [1, 2]) {
    const s = await openSdk1(t, "stdio", { handshake: "initialize", tools: big }, { major, lockTools: big, continuity: { timeout: 120000 } });
    assert.equal(s.client.continuity.record.effect, "proceed");
    assert.equal((await s.client.callTool({ name: "big", arguments: {} })).content[0].text, "called big", `SDK ${major}.x`);
    await s.client.close();
  }
});

test("readCapped reads to the end within the cap, and stops past it", async () => {
  const stream = (...chunks) => new Blob(chunks).stream();
  assert.deepEqual(await readCapped(stream("abc", "def"), 6), { bytes: new TextEncoder().encode("abcdef"), over: false });
  const r = await readCapped(stream("abc", "def", "ghi"), 5);
  assert.equal(r.over, true);
  assert.ok(r.bytes.length <= 5, `${r.bytes.length} bytes kept`);
  assert.deepEqual(await readCapped(null, 5), { bytes: new Uint8Array(0), over: false });
});

/** The details of a record's server_unavailable observations. */
function unavailable(raw) {
  return JSON.parse(raw)
    .observations.filter((o) => o.observation === "server_unavailable")
    .map((o) => o.detail.detail);
}


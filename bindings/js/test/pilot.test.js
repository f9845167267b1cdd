// The pilot upload against the real test issuer (hosttest/issuer): with the
// issuer down, checks are unchanged and every record waits in the log;
// once it is back, the background upload sends them all (docs/preflight.md,
// "The pilot upload").
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { openSdk1, startIssuer, tempDir, until, ROOT, TOOLS } from "./helpers.js";
import { pilotAckPath, uploadPending } from "../src/index.js";

const acked = (logPath) => {
  try {
    return Number.parseInt(readFileSync(pilotAckPath(logPath), "latin1").split(" ")[0], 10);
  } catch {
    return 0;
  }
};

test("the issuer down for a while, then back: no record is dropped, the checks never wait for it", async (t) => {
  const iss = await startIssuer(t);
  const r = await fetch(iss.url + "/api/v1/pilot", { method: "POST" });
  assert.equal(r.status, 201);
  const { pilot_id: id, token } = await r.json();
  await iss.knobs({ down: "503" });
  const logPath = join(tempDir(t), "records.jsonl");
  const u = await openSdk1(t, "http", { tools: TOOLS }, {
    connect: false,
    continuity: { logPath, pilot: { url: iss.url, id, token, minBackoffMs: 20, maxBackoffMs: 100 } },
  });
  const started = Date.now();
  await u.client.connect(u.transport);
  for (let i = 0; i < 3; i++) await u.client.continuity.recheck();
  assert.ok(Date.now() - started < 5000, "checks with the issuer down are not slowed");
  assert.equal(u.client.continuity.records.length, 4);
  await new Promise((res) => setTimeout(res, 200));
  assert.equal(acked(logPath), 0, "nothing acknowledged with the issuer down");
  assert.equal(readFileSync(logPath, "utf8").split("\n").length - 1, 4);

  await iss.knobs({});
  const size = readFileSync(logPath).length;
  await until(() => acked(logPath) === size, "the upload once the issuer is back");

  // The issuer holds every record as written: sent whole, each is a duplicate.
  const again = await fetch(`${iss.url}/api/v1/pilot/${id}/records`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: readFileSync(logPath) });
  assert.deepEqual((await again.json()).results.map((r) => r.status), ["duplicate", "duplicate", "duplicate", "duplicate"]);
  // Sent again with the ack file lost: every record a duplicate, nothing lost.
  rmSync(pilotAckPath(logPath));
  assert.equal(await uploadPending({ url: iss.url, id, token }, logPath), 4);
  assert.equal(acked(logPath), size);
});

test("a log goes in batches of at most 500 lines; a line over the issuer's 8 MiB stays, named", async (t) => {
  const iss = await startIssuer(t);
  const { pilot_id: id, token } = await (await fetch(iss.url + "/api/v1/pilot", { method: "POST" })).json();
  const pilot = { url: iss.url, id, token };
  const logPath = join(tempDir(t), "records.jsonl");
  writeFileSync(logPath, "{}\n".repeat(600));
  assert.equal(await uploadPending(pilot, logPath), 600);
  assert.equal(acked(logPath), 1800);
  appendFileSync(logPath, "x".repeat(9 << 20) + "\n");
  await assert.rejects(uploadPending(pilot, logPath), /is over 8388608 bytes/);
  assert.equal(acked(logPath), 1800);
});

// testdata/pilot-upload.json: the same log and the same issuer answers
// leave the same ack file in every host (internal/preflight replays it in
// Go, tests/test_pilot.py in Python): the queue is the core's pilot_queue.
test("the recorded upload leaves the ack bytes every host leaves", async (t) => {
  const golden = JSON.parse(readFileSync(join(ROOT, "testdata", "pilot-upload.json"), "utf8"));
  const logPath = join(tempDir(t), "records.jsonl");
  writeFileSync(logPath, golden.log);
  for (const pass of golden.passes) {
    const answers = [...pass.answers];
    const problems = [];
    const srv = createServer((req, res) => {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        const sent = Buffer.concat(chunks).length;
        const a = answers.shift();
        if (!a) {
          problems.push(`a POST of ${sent} bytes past the recorded answers`);
          res.writeHead(418).end();
          return;
        }
        if (sent !== a.sent_bytes) problems.push(`a POST of ${sent} bytes where ${a.sent_bytes} were recorded`);
        res.writeHead(a.status).end(a.body);
      });
    });
    await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
    if (pass.ack_before != null) writeFileSync(pilotAckPath(logPath), pass.ack_before);
    let n = 0;
    let err = null;
    try {
      n = await uploadPending({ url: `http://127.0.0.1:${srv.address().port}`, id: "pilot-replay", token: "t" }, logPath);
    } catch (e) {
      err = e;
    } finally {
      srv.close();
    }
    assert.deepEqual(problems, [], pass.name);
    assert.equal(answers.length, 0, `${pass.name}: recorded answers not asked for`);
    if (pass.error === null) assert.equal(err, null, pass.name);
    else {
      assert.ok(err?.message.endsWith(pass.error), `${pass.name}: ${err?.message}`);
      assert.equal(err.chainGap, pass.chain_gap, pass.name);
      n = pass.acknowledged; // a pass that throws reports no count
    }
    assert.equal(n, pass.acknowledged, pass.name);
    let ack = null;
    try {
      ack = readFileSync(pilotAckPath(logPath), "latin1");
    } catch {
      // none
    }
    assert.equal(ack, pass.ack_after, pass.name);
  }
});

test("a pilot with a record key takes the uploads signed with it, and none without (issue 37, F7)", async (t) => {
  const iss = await startIssuer(t);
  const r = await fetch(iss.url + "/api/v1/pilot?record_key=true", { method: "POST" });
  assert.equal(r.status, 201);
  const { pilot_id: id, token, record_key: recordKey } = await r.json();
  assert.ok(recordKey, "a record key is answered");
  const logPath = join(tempDir(t), "records.jsonl");
  writeFileSync(logPath, "{}\n".repeat(3));
  await assert.rejects(uploadPending({ url: iss.url, id, token }, logPath));
  assert.equal(acked(logPath), 0, "nothing of an unsigned upload is acknowledged");
  assert.equal(await uploadPending({ url: iss.url, id, token, recordKey }, logPath), 3);
  assert.equal(acked(logPath), readFileSync(logPath).length);
});

// The SDK's default bounds are the core's answer (version's limits, issue
// 18), not numbers of its own: a server frame, a check's deadline, the
// issuer's deadline and answer, a record log — the same bounds as the Go
// preflight and the CLI apply.
import { test } from "node:test";
import assert from "node:assert/strict";
import { load } from "../src/index.js";
import { IssuerClient } from "../src/issuer.js";
import { openSdk1, TOOLS } from "./helpers.js";

const PIN = { kid: "test-issuer-2026", public_key: "R2+nOTqJ24B+Bub9jH6p+WWS7P39GRzcQVzBDMKGvUQ=" };

test("Core.limits is the version op's limits member", async () => {
  const cc = await load();
  assert.deepEqual({ ...cc.limits }, cc.version().limits);
  for (const k of ["answer_bytes", "check_timeout_ms", "issuer_answer_bytes", "issuer_timeout_ms", "pages_bytes", "record_log_bytes"]) {
    assert.ok(Number.isInteger(cc.limits[k]) && cc.limits[k] > 0, k);
  }
});

test("a session without bounds of its own applies the core's", async (t) => {
  const cc = await load();
  // timeout: 0 leaves the deadline to the default, as an unset one does.
  const s = await openSdk1(t, "stdio", { tools: TOOLS }, { continuity: { timeout: 0, issuer: { url: "http://127.0.0.1:2", pinnedKeys: [PIN] } } });
  assert.deepEqual(s.client.continuity.limits, {
    maxAnswerBytes: cc.limits.answer_bytes,
    timeout: cc.limits.check_timeout_ms,
    issuerTimeout: cc.limits.issuer_timeout_ms,
  });
});

test("the issuer client's bounds are the core's", async () => {
  const cc = await load();
  const c = new IssuerClient(cc, { url: "http://127.0.0.1:2", pinnedKeys: [PIN] }, null, "");
  assert.equal(c.timeout, cc.limits.issuer_timeout_ms);
  assert.equal(c.maxAnswer, cc.limits.issuer_answer_bytes);
});

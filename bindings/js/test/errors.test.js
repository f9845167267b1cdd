// One error base class: every error the SDK throws for a reason of its own
// is a CrawlcheckError, carrying the core's code when the core refused
// (docs/js.md, "Errors"); records keep the record's own member names.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CrawlcheckError, CoreError, ContinuityRefused, PreflightError, ContinuityRecord, ERROR_CODES, load, withPreflight } from "../src/index.js";
import { openSdk1, TOOLS } from "./helpers.js";

test("a core refusal is a CrawlcheckError with the core's code", async () => {
  const cc = await load();
  assert.throws(() => cc.verifyLock({ lock: "{", now: "2026-01-01T00:00:00Z" }), (e) => {
    assert.ok(e instanceof CoreError && e instanceof CrawlcheckError);
    assert.ok(ERROR_CODES.includes(e.code), e.code);
    return true;
  });
});

test("a lockfile the core refuses fails the connect with a PreflightError carrying the core's code, before the server is started", async () => {
  const client = withPreflight(new Client({ name: "x", version: "1" }), { lock: new TextEncoder().encode("{") });
  await assert.rejects(client.connect(new StdioClientTransport({ command: "/nonexistent/crawlcheck-no-server" })), (e) => {
    assert.ok(e instanceof PreflightError && e instanceof CrawlcheckError, String(e));
    assert.ok(e.cause instanceof CoreError);
    assert.equal(e.code, e.cause.code);
    assert.ok(ERROR_CODES.includes(e.code), e.code);
    return true;
  });
});

test("a refused call is a CrawlcheckError without a code; the record keeps its own member names", async (t) => {
  const changed = TOOLS.map((x) => (x.name === "get_item" ? { ...x, description: "Changed." } : x));
  const { client } = await openSdk1(t, "stdio", { tools: changed });
  await assert.rejects(client.callTool({ name: "get_item", arguments: {} }), (e) => {
    assert.ok(e instanceof ContinuityRefused && e instanceof CrawlcheckError);
    assert.equal(e.code, null);
    return true;
  });
  const rec = client.continuity.record;
  assert.ok(rec instanceof ContinuityRecord);
  const json = JSON.parse(rec.raw);
  for (const [k, v] of Object.entries(json)) assert.deepEqual(rec[k], v, k);
  assert.match(rec.record_sha256, /^[0-9a-f]{64}$/);
  assert.equal(rec.sha256, undefined);
  assert.equal(rec.prev, undefined);
});

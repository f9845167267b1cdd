// Regressions found against the reference servers nobody here wrote
// (@modelcontextprotocol/server-everything, pinned in package.json), each
// through the real SDK clients: the lockfile `crawlcheck lock` makes against
// the same server lets every tool through.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NOW, now, tempDir, crawlcheck, recordOf } from "./helpers.js";
import { startReference, referenceStdio } from "./servers.js";
import { withPreflight, withContinuity } from "../src/index.js";

const EVERYTHING = "@modelcontextprotocol/server-everything";

test("server-everything over streamable HTTP (an SSE priming event before each answer): both SDK majors read the whole list", async (t) => {
  const dir = tempDir(t);
  const { base } = await startReference(t, EVERYTHING, ["streamableHttp"]);
  const url = `${base}/mcp`;
  const lock = join(dir, "crawlcheck.lock.json");
  crawlcheck(["lock", "--features=false", "--url", url, "--now", "2026-11-01T00:00:00Z", "-o", lock]);
  const goRecord = crawlcheck(["check", "--lock", lock, "--url", url, "--now", NOW, "--json"]).trim();
  assert.match(goRecord, /"effect":"proceed"/);
  for (const major of [1, 2]) {
    const rec = await recordOf(major, "http", null, url, lock, { now });
    assert.deepEqual(
      rec.observations.map((o) => o.observation),
      ["unchanged"],
      `SDK ${major}.x: ${rec.raw}`,
    );
    assert.equal(rec.effect, "proceed");
    assert.equal(rec.observed.count, 13);
    assert.equal(rec.raw, goRecord, `SDK ${major}.x record differs from the Go preflight's`);
  }
});

test("server-everything offers get-roots-list only to a client declaring roots: a lockfile made declaring roots names the capabilities when the SDK client (declaring none) does not see it", async (t) => {
  const dir = tempDir(t);
  const { base } = await startReference(t, EVERYTHING, ["streamableHttp"]);
  const url = `${base}/mcp`;
  const lock = join(dir, "crawlcheck.lock.json");
  crawlcheck(["lock", "--features=false", "--url", url, "--capabilities", "roots", "--now", "2026-11-01T00:00:00Z", "-o", lock]);
  assert.match(readFileSync(lock, "utf8"), /"client_capabilities": \{\n {6}"roots": \{/);
  const goRecord = crawlcheck(["check", "--lock", lock, "--url", url, "--mode", "review", "--now", NOW, "--json"]).trim();
  for (const major of [1, 2]) {
    const rec = await recordOf(major, "http", null, url, lock, { now, mode: "review" });
    const removed = rec.observations.find((o) => o.observation === "tool_removed");
    assert.equal(removed?.tool, "get-roots-list", rec.raw);
    assert.deepEqual(removed.detail, { client_capabilities: { approved: { roots: { listChanged: true } }, observed: {} } });
    assert.equal(rec.effect, "pause");
    // The Go preflight (crawlcheck check, declaring none by default) says the same bytes.
    assert.equal(rec.raw, goRecord, `SDK ${major}.x record differs from the Go preflight's`);
  }
});

test("server-everything over the legacy HTTP+SSE transport: crawlcheck lock --sse then check --sse proceeds, and withPreflight over SSEClientTransport (sdk 1.x; client 2.x has no SSE transport) records the same bytes", async (t) => {
  const dir = tempDir(t);
  const { base } = await startReference(t, EVERYTHING, ["sse"]);
  const url = `${base}/sse`;
  const lock = join(dir, "crawlcheck.lock.json");
  crawlcheck(["lock", "--features=false", "--sse", url, "--now", "2026-11-01T00:00:00Z", "-o", lock]);
  const goRecord = crawlcheck(["check", "--lock", lock, "--sse", url, "--now", NOW, "--json"]).trim();
  const go = JSON.parse(goRecord);
  assert.deepEqual(
    go.observations.map((o) => o.observation),
    ["unchanged"],
    goRecord,
  );
  assert.equal(go.effect, "proceed");
  assert.equal(go.observed.count, 13);
  assert.equal(go.server.observed_url, url);
  // crawlcheck ci reaches a configured server of type sse over the same
  // transport (an agentgate.lock names the server, the config its stream).
  const agentgate = join(dir, "agentgate.lock");
  crawlcheck(["lock", "--features=false", "--sse", url, "--format", "agentgate", "--name", "everything", "--now", "2026-11-01T00:00:00Z", "-o", agentgate]);
  const config = join(dir, "mcp.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { everything: { type: "sse", url } } }));
  assert.match(crawlcheck(["ci", "--lock", agentgate, "--config", config]), /^everything +connect +unchanged$/m);
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
  // Several sessions: the POST's 202 and the answer on the stream race.
  for (let i = 0; i < 3; i++) {
    const client = withPreflight(new Client({ name: "crawlcheck-test", version: "1.0.0" }), { lock, continuity: { now } });
    await client.connect(new SSEClientTransport(new URL(url)));
    const rec = client.continuity.record;
    const { tools } = await client.listTools();
    await client.close();
    assert.equal(rec.raw, goRecord, "the SSEClientTransport record differs from crawlcheck check --sse's");
    assert.equal(tools.length, 13);
  }
});

// The Agents adapter wraps a server @openai/agents connected itself (its
// client 2.x), so the capture starts after the handshake. server-everything
// sends notifications/tools/list_changed right after it. Over HTTP+SSE the
// event stream was opened, through the fetch the transport started with,
// before the capture: the first check's answer arrived there untapped and
// the record was capture_failed (answer_not_captured), pausing a clean server.
for (const transport of ["stdio", "sse"]) {
  test(`@openai/agents withContinuity over server-everything (${transport}), on a server the framework connected: the first record is unchanged, every tool handed over`, async (t) => {
    const agents = await import("@openai/agents");
    const dir = tempDir(t);
    const lock = join(dir, "crawlcheck.lock.json");
    let make;
    if (transport === "stdio") {
      const p = referenceStdio(EVERYTHING, ["stdio"]);
      crawlcheck(["lock", "--features=false", "--server", [p.command, ...p.args].join(" "), "--now", "2026-11-01T00:00:00Z", "-o", lock]);
      make = () => new agents.MCPServerStdio({ command: p.command, args: p.args, name: "everything" });
    } else {
      const { base } = await startReference(t, EVERYTHING, ["sse"]);
      const url = `${base}/sse`;
      crawlcheck(["lock", "--features=false", "--sse", url, "--now", "2026-11-01T00:00:00Z", "-o", lock]);
      make = () => new agents.MCPServerSSE({ url, name: "everything" });
    }
    // Several sessions: the notification, the stream and the listing race.
    for (let i = 0; i < 3; i++) {
      const server = make();
      await server.connect();
      try {
        const gated = withContinuity(server, lock, { mode: "review", now });
        const tools = await gated.listTools();
        const first = gated.continuity.records[0];
        assert.deepEqual(
          first.observations.map((o) => o.observation),
          ["unchanged"],
          first.raw,
        );
        assert.equal(first.effect, "proceed");
        assert.equal(first.observed.count, 13);
        assert.equal(tools.length, 13);
      } finally {
        await server.close();
      }
    }
  });
}

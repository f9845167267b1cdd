// A typed example, checked by `tsc --noEmit` (npm run typecheck): the API as
// a TypeScript program uses it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { load, withPreflight, ContinuityRefused, CoreError, CrawlcheckError, type ContinuityRecord } from "@crawlcheck/sdk";

export async function main(): Promise<void> {
  const cc = await load();
  const v = cc.version();
  const engine: string = v.engine;
  const hashed = cc.hashTools({ tools: [{ name: "echo", description: "Echo." }] });
  const sha: string = hashed.tools_sha256;
  // Every op's request and result are typed from the core's op table (src/ops.d.ts).
  const chain = cc.verifyChain({ records: new Uint8Array() });
  const valid: boolean = chain.valid;
  const canonical: string = cc.call("canonicalize", { json: "{}" }).canonical;
  try {
    cc.verifyLock({ lock: "not json", now: new Date().toISOString() });
  } catch (e) {
    if (e instanceof CoreError) console.log(e.code, cc.shown(e.coreMessage));
  }

  const client = withPreflight(new Client({ name: "my-agent", version: "1.0.0" }), {
    lock: "crawlcheck.lock.json",
    continuity: { mode: "observe", logPath: "records.jsonl", onRecord: (r: ContinuityRecord) => console.log(r.effect) },
  });
  await client.connect(new StdioClientTransport({ command: "my-server" }));
  const { tools } = await client.listTools();
  try {
    await client.callTool({ name: "get_item", arguments: {} });
  } catch (e) {
    if (e instanceof ContinuityRefused) console.log(e.tool, e.effect, e.record?.record_sha256);
    // Every error of the SDK is a CrawlcheckError, with the core's code when the core refused.
    else if (e instanceof CrawlcheckError) console.log(e.name, e.code);
  }
  const rec: ContinuityRecord = await client.continuity.confirm("get_item");
  console.log(engine, sha, valid, canonical, tools.length, rec.observations.length, client.continuity.records.length);
  await client.close();
}

// The adapters, on the frameworks' own objects.
import { MCPServerStdio, Agent } from "@openai/agents";
import { withContinuity, loadMcpToolsWithContinuity } from "@crawlcheck/sdk";

export async function adapters(client: Client): Promise<void> {
  const server = new MCPServerStdio({ command: "my-server", name: "shop", cacheToolsList: true });
  await server.connect();
  const gated = withContinuity(server, "crawlcheck.lock.json", { mode: "observe" });
  const agent = new Agent({ name: "a", instructions: "…", mcpServers: [gated] });
  console.log(agent.name, gated.continuity.records.length);
  const tools = await loadMcpToolsWithContinuity("shop", client, "crawlcheck.lock.json", { mode: "observe" });
  console.log(tools.length);
}

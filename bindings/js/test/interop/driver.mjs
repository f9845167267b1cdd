// One cell of the interop matrix (hosttest/interop, docs/interop.md) on a
// JS entry point. argv[2] is the cell as JSON:
//   {host: "sdk1"|"sdk2"|"agents"|"langchain", transport: "stdio"|"http"|"sse",
//    command: [..] (stdio), url (http, sse), lock, mode, now (RFC 3339), log}
// One session: connect through the entry point, list the tools the model
// would get, close. Prints {handed: [names] | null, refused: message | null}
// on stdout; the records are the log's (the matrix reads it).
import { ContinuityRefused, withPreflight, withContinuity, loadMcpToolsWithContinuity } from "../../src/index.js";

const cell = JSON.parse(process.argv[2]);
const now = () => new Date(cell.now);
const continuity = { mode: cell.mode, now, logPath: cell.log };

async function sdk(major) {
  if (major === 1) {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
    return { Client, StdioClientTransport, StreamableHTTPClientTransport, SSEClientTransport };
  }
  const { Client, StreamableHTTPClientTransport, SSEClientTransport } = await import("@modelcontextprotocol/client");
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
  return { Client, StdioClientTransport, StreamableHTTPClientTransport, SSEClientTransport };
}

function transportOf(m) {
  switch (cell.transport) {
    case "stdio":
      return new m.StdioClientTransport({ command: cell.command[0], args: cell.command.slice(1), stderr: "ignore" });
    case "http":
      return new m.StreamableHTTPClientTransport(new URL(cell.url));
    case "sse":
      return new m.SSEClientTransport(new URL(cell.url));
  }
  throw new Error(`unknown transport ${cell.transport}`);
}

async function session() {
  switch (cell.host) {
    case "sdk1":
    case "sdk2": {
      const m = await sdk(cell.host === "sdk1" ? 1 : 2);
      const client = withPreflight(new m.Client({ name: "interop", version: "1.0" }), { lock: cell.lock, continuity });
      try {
        await client.connect(transportOf(m));
        const { tools } = await client.listTools();
        return tools.map((x) => x.name);
      } finally {
        await client.close().catch(() => {});
      }
    }
    case "langchain": {
      const m = await sdk(1);
      const client = new m.Client({ name: "interop", version: "1.0" });
      try {
        const tools = await loadMcpToolsWithContinuity("interop", client, cell.lock, { ...continuity, transport: transportOf(m) });
        return tools.map((x) => x.name);
      } finally {
        await client.close().catch(() => {});
      }
    }
    case "agents": {
      const agents = await import("@openai/agents");
      const server =
        cell.transport === "stdio"
          ? new agents.MCPServerStdio({ command: cell.command[0], args: cell.command.slice(1), name: "interop" })
          : cell.transport === "http"
            ? new agents.MCPServerStreamableHttp({ url: cell.url, name: "interop" })
            : new agents.MCPServerSSE({ url: cell.url, name: "interop" });
      const gated = withContinuity(server, cell.lock, continuity);
      try {
        await gated.connect();
        const tools = await gated.listTools();
        return tools.map((x) => x.name);
      } finally {
        await gated.close().catch(() => {});
      }
    }
  }
  throw new Error(`unknown host ${cell.host}`);
}

let out;
try {
  out = { handed: await session(), refused: null };
} catch (e) {
  const refused = e instanceof ContinuityRefused ? e : e?.cause instanceof ContinuityRefused ? e.cause : null;
  if (!refused) throw e;
  out = { handed: null, refused: refused.message };
}
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);

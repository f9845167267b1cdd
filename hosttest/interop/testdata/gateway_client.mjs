// The official TypeScript client (SDK 1.x, or client 2.x) in front of
// `crawlcheck run`, as a desktop client's config starts it: the gateway rows
// of the interop matrix (hosttest/interop) and internal/gateway's
// TestTypeScriptClient. Each client speaks its default handshake.
// argv: NODE_MODULES MAJOR SPEC, SPEC a JSON object {command: [argv], calls: [tool names]}.
// Prints one JSON object: {tools: [names], calls: [{name, text} | {name, code, message, data}]}.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, major, specText] = process.argv.slice(2);
const spec = JSON.parse(specText);
const load = (...p) => import(pathToFileURL(join(modules, ...p)).href);

let Client, StdioClientTransport;
if (major === "1") {
  ({ Client } = await load("@modelcontextprotocol", "sdk", "dist", "esm", "client", "index.js"));
  ({ StdioClientTransport } = await load("@modelcontextprotocol", "sdk", "dist", "esm", "client", "stdio.js"));
} else {
  // The package's ESM entry points, as its exports map names them.
  ({ Client } = await load("@modelcontextprotocol", "client", "dist", "index.mjs"));
  ({ StdioClientTransport } = await load("@modelcontextprotocol", "client", "dist", "stdio.mjs"));
}

const client = new Client({ name: "gateway-ts-test", version: "1.0.0" });
const transport = new StdioClientTransport({ command: spec.command[0], args: spec.command.slice(1), stderr: "inherit" });
await client.connect(transport);
const out = { tools: (await client.listTools()).tools.map((t) => t.name), calls: [] };
for (const name of spec.calls ?? []) {
  try {
    const res = await client.callTool({ name, arguments: {} });
    out.calls.push({ name, text: res.content?.[0]?.text ?? "" });
  } catch (err) {
    out.calls.push({ name, code: err.code, message: err.message, data: err.data ?? null });
  }
}
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");

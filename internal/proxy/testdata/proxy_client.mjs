// The official TypeScript client (SDK 1.x, or client 2.x, as bindings/js
// pins them) in front of `crawlcheck proxy` over streamable HTTP, as an
// HTTP-only client is configured with it: the proxy's URL and its token.
// internal/proxy's TestTypeScriptClients. Each client speaks its default
// handshake.
// argv: NODE_MODULES MAJOR SPEC, SPEC a JSON object {url, token, calls: [tool names]}.
// Prints one JSON object: {tools: [names], calls: [{name, text} | {name, code, message}]}.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, major, specText] = process.argv.slice(2);
const spec = JSON.parse(specText);
const load = (...p) => import(pathToFileURL(join(modules, ...p)).href);

let Client, StreamableHTTPClientTransport;
if (major === "1") {
  ({ Client } = await load("@modelcontextprotocol", "sdk", "dist", "esm", "client", "index.js"));
  ({ StreamableHTTPClientTransport } = await load("@modelcontextprotocol", "sdk", "dist", "esm", "client", "streamableHttp.js"));
} else {
  ({ Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol", "client", "dist", "index.mjs"));
}

const client = new Client({ name: "proxy-ts-test", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(spec.url), {
  requestInit: { headers: { Authorization: `Bearer ${spec.token}` } },
});
await client.connect(transport);
const out = { tools: (await client.listTools()).tools.map((t) => t.name), calls: [] };
for (const name of spec.calls ?? []) {
  try {
    const res = await client.callTool({ name, arguments: {} });
    out.calls.push({ name, text: res.content?.[0]?.text ?? "" });
  } catch (err) {
    out.calls.push({ name, code: err.code, message: err.message });
  }
}
await transport.terminateSession?.();
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");

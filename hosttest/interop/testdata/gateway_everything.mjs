// The official TypeScript client (SDK 1.x, or client 2.x) in front of
// `crawlcheck run` in front of server-everything, declaring roots, sampling
// and elicitation as a desktop client does: every round trip the gateway
// must pass through (the server's sampling, elicitation and roots requests,
// ping, progress, logging, a cancelled call), for internal/gateway's
// TestEverythingTypeScript.
// argv: NODE_MODULES MAJOR SPEC, SPEC a JSON object {command: [argv]}.
// Prints one JSON object of what came back (see the fields of out).
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, major, specText] = process.argv.slice(2);
const spec = JSON.parse(specText);
const load = (...p) => import(pathToFileURL(join(modules, ...p)).href);

let Client, StdioClientTransport, on;
if (major === "1") {
  ({ Client } = await load("@modelcontextprotocol", "sdk", "dist", "esm", "client", "index.js"));
  ({ StdioClientTransport } = await load("@modelcontextprotocol", "sdk", "dist", "esm", "client", "stdio.js"));
  // SDK 1.x registers a handler by the request's zod schema.
  const types = await load("@modelcontextprotocol", "sdk", "dist", "esm", "types.js");
  const schemas = {
    "sampling/createMessage": types.CreateMessageRequestSchema,
    "elicitation/create": types.ElicitRequestSchema,
    "roots/list": types.ListRootsRequestSchema,
    "notifications/message": types.LoggingMessageNotificationSchema,
  };
  on = (client, method, handler) =>
    method.startsWith("notifications/")
      ? client.setNotificationHandler(schemas[method], handler)
      : client.setRequestHandler(schemas[method], handler);
} else {
  ({ Client } = await load("@modelcontextprotocol", "client", "dist", "index.mjs"));
  ({ StdioClientTransport } = await load("@modelcontextprotocol", "client", "dist", "stdio.mjs"));
  // Client 2.x registers a handler by the method's name.
  on = (client, method, handler) =>
    method.startsWith("notifications/")
      ? client.setNotificationHandler(method, handler)
      : client.setRequestHandler(method, handler);
}

const out = { tools: [], sampled: 0, elicited: 0, rootsAsked: 0, logs: 0, progress: [], calls: {} };
const client = new Client(
  { name: "gateway-ts-everything", version: "1.0.0" },
  { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} } },
);
on(client, "sampling/createMessage", async () => {
  out.sampled++;
  return { model: "gateway-test", role: "assistant", content: { type: "text", text: "sampled through the gateway" } };
});
on(client, "elicitation/create", async () => {
  out.elicited++;
  return { action: "decline" };
});
on(client, "roots/list", async () => {
  out.rootsAsked++;
  return { roots: [{ uri: "file:///gateway-test-root", name: "gateway-test-root" }] };
});
on(client, "notifications/message", async () => {
  out.logs++;
});

const transport = new StdioClientTransport({ command: spec.command[0], args: spec.command.slice(1), stderr: "inherit" });
await client.connect(transport);
out.tools = (await client.listTools()).tools.map((t) => t.name);
await client.setLoggingLevel("debug");
await client.ping();
out.ping = true;

const text = (res) => (res.content ?? []).map((c) => c.text ?? "").join("");
const call = async (label, name, args, options) => {
  try {
    const res = major === "1" ? await client.callTool({ name, arguments: args }, undefined, options) : await client.callTool({ name, arguments: args }, options);
    out.calls[label] = res.isError ? { error: text(res) } : { text: text(res) };
  } catch (err) {
    out.calls[label] = { error: String(err?.message ?? err) };
  }
};
await call("echo", "echo", { message: "hi" });
await call("sampling", "trigger-sampling-request", { prompt: "hello", maxTokens: 5 });
await call("elicitation", "trigger-elicitation-request", {});
await call("roots", "get-roots-list", {});
await call("progress", "trigger-long-running-operation", { duration: 0.4, steps: 2 }, { onprogress: (p) => out.progress.push(p.progress) });
await call("logging", "toggle-simulated-logging", {});

// A call the client cancels: notifications/cancelled goes out, and the
// session goes on.
const abort = new AbortController();
setTimeout(() => abort.abort(), 300);
await call("cancelled", "trigger-long-running-operation", { duration: 5, steps: 5 }, { signal: abort.signal });
await call("after", "echo", { message: "after" });

// The simulated logging sends a message every few seconds: wait for one.
for (let i = 0; i < 100 && out.logs === 0; i++) {
  await new Promise((r) => setTimeout(r, 50));
}
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");

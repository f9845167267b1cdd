// The Node session rows of `make bench` (hosttest/bench -table, issue 23):
// one session is `connect` + `listTools` + `close` through the official 1.x
// client, with `withPreflight` or without it, against a server described in
// a JSON spec file ({name, transport: "stdio"|"http", command?, args?, url?,
// lock, tools}).
//
//   node bench/session.js once preflight|plain SPEC
//       one session in this (fresh) process, then exit: the parent times the
//       whole process, so Node's start-up, the module's load and the first
//       check are in it.
//   node bench/session.js warm PAIRS SPEC
//       in one process, a few untimed sessions of each, then PAIRS
//       interleaved pairs (alternating which goes first); prints one JSON
//       line: medians of wall and of this process's CPU (process.cpuUsage:
//       the server's CPU is the same for both and not counted) and the
//       median of the pairs' CPU ratios.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { withPreflight } from "../src/index.js";

const [mode, arg, specPath] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf8"));
const now = () => new Date("2026-11-30T12:00:00.000Z");

function transport() {
  if (spec.transport === "http") return new StreamableHTTPClientTransport(new URL(spec.url));
  return new StdioClientTransport({ command: spec.command, args: spec.args, stderr: "ignore" });
}

async function session(preflight) {
  let client = new Client({ name: "bench", version: "1" });
  if (preflight) client = withPreflight(client, { lock: spec.lock, continuity: { now, timeout: 60000 } });
  await client.connect(transport());
  const got = await client.listTools();
  if (preflight && client.continuity.record.effect !== "proceed") {
    throw new Error(`bench: ${spec.name}: effect ${client.continuity.record.effect}`);
  }
  await client.close();
  if (got.tools.length !== spec.tools) throw new Error(`bench: ${spec.name}: ${got.tools.length} tools, want ${spec.tools}`);
}

async function measure(preflight) {
  const c = process.cpuUsage();
  const t = performance.now();
  await session(preflight);
  const d = process.cpuUsage(c);
  return { wall: performance.now() - t, cpu: (d.user + d.system) / 1000 };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

if (mode === "once") {
  await session(arg === "preflight");
} else if (mode === "warm") {
  const pairs = Number(arg);
  for (let i = 0; i < 3; i++) {
    await session(false);
    await session(true);
  }
  const plain = [];
  const pre = [];
  for (let i = 0; i < pairs; i++) {
    if (i % 2) {
      pre.push(await measure(true));
      plain.push(await measure(false));
    } else {
      plain.push(await measure(false));
      pre.push(await measure(true));
    }
  }
  console.log(
    JSON.stringify({
      plain_wall: median(plain.map((x) => x.wall)),
      preflight_wall: median(pre.map((x) => x.wall)),
      plain_cpu: median(plain.map((x) => x.cpu)),
      preflight_cpu: median(pre.map((x) => x.cpu)),
      ratio_cpu: median(pre.map((x, i) => x.cpu / plain[i].cpu)),
      ratio_wall: median(pre.map((x, i) => x.wall / plain[i].wall)),
    }),
  );
} else {
  throw new Error("usage: session.js once preflight|plain SPEC | warm PAIRS SPEC");
}
process.exit(0);

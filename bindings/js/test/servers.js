// The reference MCP servers nobody here wrote, at the versions package.json
// pins: started by the tests over stdio (their command) or over HTTP (on
// 127.0.0.1, a port the system picks; test/interop/listen-local.mjs).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const PRELOAD = fileURLToPath(new URL("./interop/listen-local.mjs", import.meta.url));

/** The entry script and version of an installed reference server package. */
export function reference(pkg) {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { version, bin } = require(manifest);
  const rel = typeof bin === "string" ? bin : Object.values(bin)[0];
  return { script: join(dirname(manifest), rel), version };
}

/** The stdio command (node and its script) of a reference server. */
export function referenceStdio(pkg, args = []) {
  return { command: process.execPath, args: [reference(pkg).script, ...args] };
}

/**
 * Starts a reference server over HTTP (args choose the transport); resolves
 * {base, stop} with base its address (no path). The server ends with the test.
 */
export async function startReference(t, pkg, args) {
  const child = spawn(process.execPath, ["--import", PRELOAD, reference(pkg).script, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  };
  t?.after?.(stop);
  const rl = createInterface({ input: child.stderr });
  const base = await new Promise((resolve, reject) => {
    rl.on("line", (line) => {
      const m = /^crawlcheck-listening (\S+)$/.exec(line);
      if (m) resolve(m[1]);
    });
    child.once("exit", (c) => reject(new Error(`${pkg} exited (${c})`)));
  });
  return { base, stop };
}

// Before the tests: the core into the package (copy-wasm.js) and the two Go
// programs the end-to-end tests talk to, the scenario MCP server and the
// test issuer (and the crawlcheck CLI, the Go side of the identity test),
// built into build/ at the repository root.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));
execFileSync(process.execPath, [fileURLToPath(new URL("./copy-wasm.js", import.meta.url))], { stdio: "inherit" });
for (const [out, pkg] of [
  ["build/mcpserver", "./hosttest/mcpserver"],
  ["build/issuer", "./hosttest/issuer"],
  ["build/crawlcheck-issuer", "./cmd/crawlcheck-issuer"],
  ["build/crawlcheck", "./cmd/crawlcheck"],
  ["build/attacker", "./hosttest/attacker"],
]) {
  execFileSync(process.env.GO ?? "go", ["build", "-o", out, pkg], { cwd: root, stdio: "inherit" });
}

// Copies the core built by `make wasm` (build/crawlcheck.wasm at the
// repository root, or $CRAWLCHECK_WASM) into the package, which ships it.
import { copyFileSync, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const from = process.env.CRAWLCHECK_WASM ?? fileURLToPath(new URL("../../../build/crawlcheck.wasm", import.meta.url));
const to = fileURLToPath(new URL("../crawlcheck.wasm", import.meta.url));
if (!existsSync(from)) {
  console.error(`copy-wasm: ${from} does not exist; run \`make wasm\` at the repository root first`);
  process.exit(1);
}
copyFileSync(from, to);

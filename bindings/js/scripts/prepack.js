// Before `npm pack` / `npm publish`: what the package ships besides src/ —
// the core (copy-wasm.js), the project's LICENSE and the third-party notices
// of what crawlcheck.wasm has compiled into it (notices/, written by
// scripts/notices at the repository root) as NOTICES.txt. The offline page
// (web/) is not shipped: it is built from the repository (`make web`).
import { copyFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
execFileSync(process.execPath, [here("./copy-wasm.js")], { stdio: "inherit" });
copyFileSync(here("../../../LICENSE"), here("../LICENSE"));
copyFileSync(here("../../../notices/crawlcheck.wasm.txt"), here("../NOTICES.txt"));

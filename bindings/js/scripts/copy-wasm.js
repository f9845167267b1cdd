// Copies the core built by `make wasm` (build/crawlcheck.wasm at the
// repository root, or $CRAWLCHECK_WASM) into the package, twice:
//
// - crawlcheck.wasm.gz, what the package ships and the loader reads by
//   default (src/core.js inflates it: node:zlib in Node, DecompressionStream
//   in a browser). Its gzip is zopfli's, 5% smaller than zlib's best: with it
//   the tarball meets its 1.5 MB target (issue 36; docs/decisions.md). Where
//   zopfli is not installed (Debian's package `zopfli`; make test-js
//   installs it) it is zlib's level 9, with a warning: the same module, a
//   larger package.
// - crawlcheck.wasm as it is, which the repository's tests, bench and page
//   build read directly; the package does not ship it.
//
// zopfli takes 15-20 s, so a .gz already there is kept when it inflates to
// this module and is zopfli's (smaller than zlib's level 9 of it).
import { copyFileSync, existsSync, readFileSync, writeFileSync, renameSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { gunzipSync, gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

const from = process.env.CRAWLCHECK_WASM ?? fileURLToPath(new URL("../../../build/crawlcheck.wasm", import.meta.url));
const to = fileURLToPath(new URL("../crawlcheck.wasm", import.meta.url));
const toGz = to + ".gz";
if (!existsSync(from)) {
  console.error(`copy-wasm: ${from} does not exist; run \`make wasm\` at the repository root first`);
  process.exit(1);
}
copyFileSync(from, to);

const wasm = readFileSync(from);
const zlibGz = gzipSync(wasm, { level: 9 });
const inflates = (gz) => {
  try {
    return gunzipSync(gz).equals(wasm);
  } catch {
    return false;
  }
};
const zopfli = spawnSync("zopfli", ["--version"], { stdio: "ignore" }).error === undefined;
if (existsSync(toGz)) {
  const have = readFileSync(toGz);
  if (inflates(have) && (!zopfli || have.length < zlibGz.length)) process.exit(0);
}
let gz = zlibGz;
if (zopfli) {
  const r = spawnSync("zopfli", ["-c", from], { maxBuffer: 256 << 20 });
  if (r.status !== 0 || !inflates(r.stdout)) {
    console.error(`copy-wasm: zopfli failed (${r.error ?? `exit ${r.status}`}): ${String(r.stderr ?? "").trim()}`);
    process.exit(1);
  }
  gz = r.stdout;
} else {
  console.error(`copy-wasm: zopfli is not installed (Debian: apt-get install zopfli): crawlcheck.wasm.gz is zlib's gzip, about 5% larger`);
}
writeFileSync(toGz + ".tmp", gz);
renameSync(toGz + ".tmp", toGz);

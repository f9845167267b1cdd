// `make web`: builds web/gen/crawlcheck-web.js and serves the page on the
// loopback interface only, printing the address. Any static server would do
// (the page also works opened as a file); this one serves web/ and nothing
// else, read-only.
//
//   node web/serve.mjs [--port N]   (default 8377; 0 picks a free port)

import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { join, normalize, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "./build.mjs";

const WEB = fileURLToPath(new URL(".", import.meta.url));
const TYPES = { html: "text/html; charset=utf-8", js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8", png: "image/png" };

const i = process.argv.indexOf("--port");
const port = i > 0 ? Number(process.argv[i + 1]) : Number(process.env.PORT ?? 8377);

const built = build();
console.log(`web: built ${built.out} (${built.bytes} bytes)`);

/**
 * The path a request names, decoded, or null when its percent-escapes are
 * not UTF-8 (`/%E0%A4%A`): such a request gets 400, and the server lives on.
 */
function requestPath(url) {
  try {
    return decodeURIComponent(new URL(url, "http://localhost").pathname);
  } catch {
    return null;
  }
}

const server = createServer(async (req, res) => {
  if (req.method !== "GET" && req.method !== "HEAD") return res.writeHead(405).end();
  let path = requestPath(req.url);
  if (path === null) return res.writeHead(400).end();
  if (path.endsWith("/")) path += "index.html";
  const file = normalize(join(WEB, path));
  if (!file.startsWith(WEB) || file.slice(WEB.length).split(sep).some((p) => p.startsWith("."))) return res.writeHead(404).end();
  try {
    const body = await readFile(file);
    res.writeHead(200, { "content-type": TYPES[file.split(".").pop()] ?? "application/octet-stream", "cache-control": "no-store", "x-content-type-options": "nosniff" });
    res.end(req.method === "HEAD" ? undefined : body);
  } catch {
    res.writeHead(404).end();
  }
});

server.listen(port, "127.0.0.1", () => {
  const { port: p } = server.address();
  console.log(`web: the offline checker is at http://127.0.0.1:${p}/`);
  console.log(`web: or open ${pathToFileURL(join(WEB, "index.html")).href} directly (no server needed)`);
  console.log("web: Ctrl-C stops the server");
});

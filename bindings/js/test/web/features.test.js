// The offline page (web/) with prompts, resources and templates (issue 35,
// item 2), in Debian's Chromium driven by playwright-core, opened from
// file://: given the lists beside the tool list, the page shows the
// record's changed items, the items withheld, what was not compared, and
// the core's scan of every item (scan_items); its record is the core's in
// Node for the same request. Run by `make test-web`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { load } from "../../src/index.js";
import { build } from "../../web/build.mjs";

const PKG = fileURLToPath(new URL("../../", import.meta.url));
const ROOT = join(PKG, "..", "..");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const PAGE_URL = pathToFileURL(join(PKG, "web", "index.html")).href;

/** A golden continuity case of the features extension (testdata/continuity.json). */
function golden(name) {
  const c = JSON.parse(readFileSync(join(ROOT, "testdata", "continuity.json"), "utf8")).cases.find((x) => x.name === name);
  assert.ok(c, name);
  return c.request;
}

let ctx;
let profile;
let cc;

before(async () => {
  build();
  profile = mkdtempSync(join(tmpdir(), "crawlcheck-web-profile-"));
  ctx = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS });
  cc = await load();
});

after(async () => {
  await ctx?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** Opens the page, fills the lockfile, the tool page, the features and where the list came from, and checks. */
async function checked(t, req, features) {
  const page = await ctx.newPage();
  t.after(() => page.close());
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  t.after(() => assert.deepEqual(errors, [], "no uncaught error in the page"));
  await page.goto(PAGE_URL);
  await page.waitForSelector("body[data-ready]", { timeout: 120000 });
  await page.$$eval("#check-form details", (ds) => ds.forEach((d) => (d.open = true)));
  await page.fill("#lock-text", JSON.stringify(req.lock));
  await page.fill("#tools-text", req.observed.pages[0]);
  await page.fill("#features-text", features);
  await page.fill("#now", req.now);
  await page.selectOption("#mode", req.mode);
  await page.fill("#endpoint", req.observed.endpoint);
  await page.selectOption("#handshake", req.observed.handshake);
  await page.fill("#protocol-version", req.observed.protocol_version);
  await page.click("#check");
  await page.waitForFunction(() => !document.body.dataset.busy && (!document.getElementById("results").hidden || document.getElementById("error").textContent !== ""), null, { timeout: 120000 });
  assert.equal(await page.textContent("#error"), "");
  return page;
}

/** The record the core in Node makes of what the page was given. */
function nodeRecord(req, features) {
  const { endpoint, handshake, protocol_version, pages } = req.observed;
  return cc.call("continuity_handoff", { now: req.now, mode: req.mode, lock: req.lock, observed: { endpoint, handshake, protocol_version, pages, features: JSON.parse(features) } }).record;
}

test("a prompt rewritten after approval: the page names it, withholds it, and shows the scan that finds what it now asks", async (t) => {
  const req = golden("features: prompt_changed in enforce, unsigned");
  const features = JSON.stringify(req.observed.features);
  const page = await checked(t, req, features);
  const rec = nodeRecord(req, features);
  assert.equal(await page.textContent("#record-sha256"), rec.record_sha256);
  assert.deepEqual(
    await page.$$eval("[data-testid=features-change]", (rows) => rows.map((r) => Array.from(r.children, (c) => c.textContent.replace(/^(Observation|Part|Effect)/, "")).join(" "))),
    ["triage prompt_changed description pause_tool"],
  );
  assert.equal(await page.textContent("[data-testid=features-withheld]"), "Withheld (1): prompts triage (pause_tool)");
  assert.equal(await page.$("[data-testid=features-blind]"), null);
  // The scan of every item, the core's findings in its order.
  const sc = cc.call("scan_items", { features: req.observed.features });
  assert.ok(sc.findings.some((f) => f.item === "triage" && f.span === "~/.ssh/id_rsa"), JSON.stringify(sc.findings));
  assert.deepEqual(
    await page.$$eval("[data-testid=features-scan-finding]", (n) => n.map((x) => x.textContent.split(" ").slice(0, 3).join(" "))),
    sc.findings.map((f) => `${f.severity} ${f.rule} ${f.part}`),
  );
  assert.match(await page.textContent("[data-testid=features-scan-severity]"), new RegExp(`^${sc.severity}: ${sc.findings.length} finding`));
  // The tools' own scan is not mixed with the items'.
  assert.equal(await page.$("[data-testid=scan-finding]"), null);
});

test("against a lockfile that pins no prompts or resources: the page says they were not compared, and still scans them", async (t) => {
  const req = golden("features: a lockfile without features compares none of them");
  const features = JSON.stringify(req.observed.features);
  const page = await checked(t, req, features);
  assert.equal(await page.textContent("#record-sha256"), nodeRecord(req, features).record_sha256);
  assert.match(await page.textContent("[data-testid=features-blind]"), /^Not compared .*: prompts, resources, resource_templates, ui_templates\.$/);
  assert.equal(await page.textContent("[data-testid=features-changes]"), "No prompt, resource or template changed.");
  assert.ok((await page.$$("[data-testid=features-scan-finding]")).length > 0);
});

test("prompts that are not JSON: a clear error naming them, and no verdict", async (t) => {
  const req = golden("features: unchanged");
  const page = await ctx.newPage();
  t.after(() => page.close());
  await page.goto(PAGE_URL);
  await page.waitForSelector("body[data-ready]", { timeout: 120000 });
  await page.$$eval("#check-form details", (ds) => ds.forEach((d) => (d.open = true)));
  await page.fill("#lock-text", JSON.stringify(req.lock));
  await page.fill("#tools-text", req.observed.pages[0]);
  await page.fill("#features-text", '{"prompts": {"pages": [');
  await page.fill("#now", req.now);
  await page.click("#check");
  await page.waitForFunction(() => !document.body.dataset.busy && document.getElementById("error").textContent !== "", null, { timeout: 120000 });
  assert.match(await page.textContent("#error"), /The prompts, resources and templates document is not JSON\. No verdict was made\./);
  assert.equal(await page.isHidden("#results"), true);
});

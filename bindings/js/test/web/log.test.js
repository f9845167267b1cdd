// The offline page keeps the issuer log's checkpoint (docs/log.md, What a
// host does), as the SDKs do beside their record log: in this browser's
// storage, the core's log.keep after each check. Driven in Debian's
// Chromium from file:// with testdata/continuity.json's log cases: the
// records are the golden ones, byte for byte, and the kept checkpoint moves
// only as the core says (a larger consistent one replaces it, an
// inconsistent one never does).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, mkdtempSync, mkdirSync, rmSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { build } from "../../web/build.mjs";

const PKG = fileURLToPath(new URL("../../", import.meta.url));
const ROOT = join(PKG, "..", "..");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const PAGE_URL = pathToFileURL(join(PKG, "web", "index.html")).href;
const OUT = process.env.CRAWLCHECK_WEB_OUT ?? join(ROOT, "build", "web-test");
const CASES = JSON.parse(readFileSync(join(ROOT, "testdata", "continuity.json"), "utf8")).cases;
const golden = (name) => {
  const c = CASES.find((x) => x.name === name);
  assert.ok(c, `golden case ${name}`);
  return c;
};

let ctx, profile;

before(async () => {
  build();
  mkdirSync(OUT, { recursive: true });
  profile = mkdtempSync(join(tmpdir(), "crawlcheck-web-log-"));
  ctx = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS });
});

after(async () => {
  await ctx?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

async function openPage(t) {
  const page = await ctx.newPage();
  t.after(() => page.close());
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  t.after(() => assert.deepEqual(errors, [], "no uncaught error in the page"));
  await page.goto(PAGE_URL);
  await page.waitForSelector("body[data-ready]", { timeout: 120000 });
  return page;
}

/** Fills the form with a golden case's request (the kept checkpoint is the browser's) and checks. */
async function checkCase(page, c) {
  const q = c.request;
  const o = q.observed;
  await page.click("#clear");
  await page.$eval("#check-form details:not(#features-details)", (d) => (d.open = true));
  await page.$eval("#log-details", (d) => (d.open = true));
  await page.fill("#lock-text", JSON.stringify(q.lock));
  await page.fill("#tools-text", o.pages[0]);
  await page.fill("#now", q.now);
  await page.selectOption("#mode", q.mode);
  await page.fill("#keydir-text", JSON.stringify(q.key_directory));
  await page.fill("#endpoint", o.endpoint);
  await page.selectOption("#handshake", o.handshake);
  await page.fill("#protocol-version", o.protocol_version);
  await page.fill("#server-info", JSON.stringify(o.server_info));
  await page.fill("#proof-text", q.log.proof);
  await page.fill("#consistency-text", q.log.consistency ? JSON.stringify({ consistency: q.log.consistency }) : "");
  await page.click("#check");
  await page.waitForFunction(() => !document.body.dataset.busy && (!document.getElementById("results").hidden || document.getElementById("error").textContent !== ""), null, { timeout: 120000 });
  assert.equal(await page.textContent("#error"), "");
}

const kept = (page) => page.evaluate(() => localStorage.getItem("crawlcheck.log-checkpoint"));
const setKept = (page, note) => page.evaluate((n) => (n ? localStorage.setItem("crawlcheck.log-checkpoint", n) : localStorage.removeItem("crawlcheck.log-checkpoint")), note);

test("the page checks the lockfile's log proof and keeps the newest checkpoint the core chooses", async (t) => {
  const page = await openPage(t);
  await setKept(page, null);

  // The first proof: included, nothing kept before; its checkpoint is kept.
  const first = golden("the lockfile is in the issuer's log");
  await checkCase(page, first);
  assert.match(await page.textContent("[data-testid=log-verdict]"), /Included at index \d+ of test-issuer\.crawlcheck\.invalid\/log/);
  assert.equal(await page.textContent("#record-sha256"), first.record.record_sha256, "the golden record_sha256");
  assert.equal(await kept(page), first.record.log.keep);
  assert.equal(await page.inputValue("#kept-checkpoint"), first.record.log.keep);

  // A smaller checkpoint kept from before, and the issuer's consistency
  // proof pasted: consistent, and the larger is kept.
  const grew = golden("the log grew consistently since the kept checkpoint");
  await setKept(page, grew.request.log.checkpoint);
  await checkCase(page, grew);
  assert.match(await page.textContent("[data-testid=log-verdict]"), /Consistent with the checkpoint kept/);
  assert.equal(await page.textContent("#record-sha256"), grew.record.record_sha256);
  assert.equal(await kept(page), grew.record.log.keep);

  // Another history: log_inconsistent, deny, and the kept one stays.
  const fork = golden("log_inconsistent in enforce");
  await setKept(page, fork.request.log.checkpoint);
  await checkCase(page, fork);
  assert.match(await page.textContent("[data-testid=log-verdict]"), /NOT CONSISTENT with the checkpoint kept/);
  assert.match(await page.textContent("[data-testid=effect]"), /effect is deny/);
  assert.equal(await page.textContent("#record-sha256"), fork.record.record_sha256);
  assert.equal(await kept(page), fork.request.log.checkpoint, "an inconsistent checkpoint is never kept");

  // A smaller checkpoint kept and no consistency proof pasted: not shown
  // one history (consistency_unavailable), denied, and not called a fork.
  const unavailable = golden("log consistency unavailable");
  await setKept(page, unavailable.request.log.checkpoint);
  await checkCase(page, unavailable);
  assert.match(await page.textContent("[data-testid=log-verdict]"), /NOT SHOWN CONSISTENT with the checkpoint kept/);
  assert.match(await page.textContent("[data-testid=effect]"), /effect is deny/);
  assert.equal(await page.textContent("#record-sha256"), unavailable.record.record_sha256);
  assert.equal(await kept(page), unavailable.request.log.checkpoint);

  // A rug pull in a lockfile the log holds: the page docs/web.md shows
  // (CRAWLCHECK_DOCS_SCREENSHOT=1 refreshes docs/web.png from it).
  const rug = golden("the log proof and a rug pull");
  await setKept(page, rug.request.log.checkpoint ?? null);
  await checkCase(page, rug);
  assert.equal(await page.textContent("#record-sha256"), rug.record.record_sha256);
  assert.match(await page.textContent("[data-testid=log-verdict]"), /Included at index \d+/);
  await page.click("#results details summary"); // the observation's detail: the word diff
  await page.locator("#results").screenshot({ path: join(OUT, "web-log-result.png") });
  if (process.env.CRAWLCHECK_DOCS_SCREENSHOT) copyFileSync(join(OUT, "web-log-result.png"), join(ROOT, "docs", "web.png"));
  t.diagnostic(`screenshot in ${join(OUT, "web-log-result.png")}`);

  await page.click("#forget-checkpoint");
  assert.equal(await kept(page), null);
});

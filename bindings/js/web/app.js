// The offline page: reads what the person opens, drops or pastes as bytes,
// hands it to the worker (web/worker.js, the core behind the SDK's browser
// loader), and shows the answers. It decides nothing itself: verdicts,
// effects, trust, which tools are withheld, what changed and whether a
// record holds all come from the core's ops. Every string from a lockfile,
// a server or a record arrives already through escape_text and is put in
// the page as a text node, never as HTML.
/* global CRAWLCHECK_WASM_BASE64, CRAWLCHECK_WORKER_SOURCE */
"use strict";

(function () {
  // The core's request cap (docs/abi.md, Limits): a larger file is refused
  // before it is read.
  const MAX_BYTES = 64 << 20;
  // Progress is shown once a check takes longer than this.
  const PROGRESS_AFTER_MS = 100;

  const $ = (id) => document.getElementById(id);
  const enc = new TextEncoder();

  /** An element with attributes and children (strings become text nodes). */
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") e.className = v;
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      e.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return e;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  // ---- the worker -------------------------------------------------------

  let worker = null;
  let ready = false;
  let nextId = 1;
  let running = null; // {id, kind, timer}
  let engine = "";

  function startWorker() {
    ready = false;
    delete document.body.dataset.ready;
    const url = URL.createObjectURL(new Blob([CRAWLCHECK_WORKER_SOURCE], { type: "text/javascript" }));
    worker = new Worker(url);
    URL.revokeObjectURL(url);
    worker.onmessage = onMessage;
    worker.onerror = (e) => {
      e.preventDefault();
      showFatal(`The core's worker failed: ${e.message || "unknown error"}`);
    };
    worker.postMessage({ type: "init", wasm: CRAWLCHECK_WASM_BASE64 });
  }

  function onMessage(e) {
    const m = e.data;
    if (m.type === "ready") {
      ready = true;
      engine = m.engine;
      $("engine").textContent = `Core loaded: ${m.engine} (ABI ${m.abi}), running in a worker.`;
      document.body.dataset.ready = "true";
      updateButtons();
      return;
    }
    if (m.type === "failed") return showFatal(`The core did not load: ${m.message}`);
    if (!running || m.id !== running.id) return; // a cancelled run
    if (m.type === "progress") {
      const p = $("progress");
      p.max = m.of;
      p.value = m.step - 1;
      $("progress-label").textContent = `Step ${m.step} of ${m.of}: ${m.label}…`;
      return;
    }
    const r = running;
    finishRun();
    if (m.type === "error") return showError(r.kind, m.where, m.error);
    if (r.kind === "check") renderCheck(m.result);
    else renderRecords(m.result);
  }

  function showFatal(text) {
    $("engine").textContent = text;
    document.body.dataset.ready = "failed";
  }

  function run(kind, input) {
    if (!ready || running) return;
    const id = nextId++;
    clear($("error"));
    $("status").textContent = kind === "check" ? "Checking…" : "Verifying…";
    document.body.dataset.busy = "true";
    if (kind === "check") {
      $("results").hidden = true;
      $("results").setAttribute("aria-busy", "true");
    } else {
      clear($("records-result"));
    }
    const timer = setTimeout(() => {
      $("progress-box").hidden = false;
    }, PROGRESS_AFTER_MS);
    running = { id, kind, input, timer };
    updateButtons();
    worker.postMessage({ type: kind, id, input });
  }

  function finishRun() {
    clearTimeout(running.timer);
    running = null;
    $("progress-box").hidden = true;
    $("progress").removeAttribute("value");
    $("results").removeAttribute("aria-busy");
    delete document.body.dataset.busy;
    updateButtons();
  }

  function cancel() {
    if (!running) return;
    finishRun();
    worker.terminate();
    $("status").textContent = "Cancelled. Nothing was checked.";
    startWorker();
  }

  // ---- inputs ------------------------------------------------------------

  // Each input holds bytes: from a file (as read, not decoded) or from the
  // text box (UTF-8). The last one given wins.
  const inputs = {
    lock: { files: [], box: "lock-text", file: "lock-file", note: "lock-loaded" },
    tools: { files: [], box: "tools-text", file: "tools-file", note: "tools-loaded" },
    features: { files: [], box: "features-text", file: "features-file", note: null },
    keydir: { files: [], box: "keydir-text", file: "keydir-file", note: null },
    policy: { files: [], box: "policy-text", file: "policy-file", note: null },
    proof: { files: [], box: "proof-text", file: "proof-file", note: null },
    records: { files: [], box: "records-text", file: "records-file", note: "records-loaded" },
  };

  async function takeFiles(name, fileList) {
    const inp = inputs[name];
    const files = Array.from(fileList);
    for (const f of files) {
      if (f.size > MAX_BYTES) {
        inp.files = [];
        note(name, "");
        showError("input", name, { code: "input_too_large", message: `${f.name}: ${f.size} bytes, over the core's 64 MiB cap` });
        return;
      }
    }
    inp.files = await Promise.all(files.map(async (f) => ({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) })));
    $(inp.box).value = "";
    note(name, inp.files.length === 0 ? "" : `Opened ${inp.files.map((f) => `${f.name} (${f.bytes.length} bytes)`).join(", ")}.`);
    updateButtons();
  }

  function note(name, text) {
    const id = inputs[name].note;
    if (id) $(id).textContent = text;
  }

  function documents(name) {
    const inp = inputs[name];
    if (inp.files.length > 0) return inp.files.map((f) => f.bytes);
    const text = $(inp.box).value;
    return text.trim() === "" ? [] : [enc.encode(text)];
  }

  for (const name of Object.keys(inputs)) {
    const inp = inputs[name];
    $(inp.file).addEventListener("change", (e) => takeFiles(name, e.target.files));
    $(inp.box).addEventListener("input", () => {
      if (inp.files.length > 0) {
        inp.files = [];
        $(inp.file).value = "";
        note(name, "");
      }
      updateButtons();
    });
  }

  // Dropping a file (or text) on a section is opening (or pasting) it.
  for (const zone of document.querySelectorAll("[data-drop]")) {
    const name = zone.dataset.drop;
    zone.addEventListener("dragover", (e) => {
      e.preventDefault();
      zone.classList.add("dragging");
    });
    zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
    zone.addEventListener("drop", (e) => {
      e.preventDefault();
      zone.classList.remove("dragging");
      const dt = e.dataTransfer;
      if (dt.files && dt.files.length > 0) {
        $(inputs[name].file).value = "";
        takeFiles(name, dt.files);
      } else {
        const text = dt.getData("text/plain");
        if (text) {
          $(inputs[name].box).value = text;
          $(inputs[name].box).dispatchEvent(new Event("input"));
        }
      }
    });
  }

  function updateButtons() {
    $("check").disabled = !ready || !!running || documents("lock").length === 0;
    $("verify").disabled = !ready || !!running || documents("records").length === 0;
    $("cancel").hidden = !running;
  }

  function checkInput(serverName) {
    const keys = $("operator-keys")
      .value.split(/\r?\n/)
      .map((s) => s.trim())
      .filter(Boolean);
    const input = {
      lock: documents("lock")[0],
      second: documents("tools"),
      features: documents("features")[0] || null,
      mode: $("mode").value,
      now: $("now").value.trim(),
      operator_keys: keys,
      key_directory: documents("keydir")[0] || null,
      policy: documents("policy")[0] || null,
      expected_policy_version: $("expected-policy-version").value.trim() || null,
      endpoint: $("endpoint").value.trim() || null,
      handshake: $("handshake").value || null,
      protocol_version: $("protocol-version").value.trim() || null,
      server_info: $("server-info").value.trim() || null,
      server_name: serverName || null,
      proof: documents("proof")[0] || null,
      kept_checkpoint: keptCheckpoint() || null,
      consistency: $("consistency-text").value.trim() || null,
    };
    return input;
  }

  // ---- the kept checkpoint -------------------------------------------------

  // The newest checkpoint of the issuer's log this page has seen, kept in
  // this browser (docs/log.md, What a host does): the record's log.keep,
  // which the core chose, written back after each check that has one.
  const KEPT = "crawlcheck.log-checkpoint";

  function keptCheckpoint() {
    try {
      return localStorage.getItem(KEPT) || "";
    } catch {
      return ""; // storage refused (a private window): kept for no longer than the page
    }
  }

  function keepCheckpoint(note) {
    try {
      if (note) localStorage.setItem(KEPT, note);
      else localStorage.removeItem(KEPT);
    } catch {
      // storage refused: the field below still shows what the core chose
    }
    $("kept-checkpoint").value = note ? note : "";
  }

  $("kept-checkpoint").value = keptCheckpoint();
  $("forget-checkpoint").addEventListener("click", () => {
    keepCheckpoint("");
    $("status").textContent = "The kept checkpoint is forgotten: the next proof starts a new history.";
  });

  $("check-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const picker = $("picker");
    run("check", checkInput(picker.hidden ? null : $("server-name").value));
  });
  $("server-name").addEventListener("change", () => run("check", checkInput($("server-name").value)));
  // A new lockfile forgets the server picked in the old one.
  for (const id of ["lock-file", "lock-text"]) $(id).addEventListener(id === "lock-file" ? "change" : "input", () => hidePicker());
  $("cancel").addEventListener("click", cancel);
  $("verify").addEventListener("click", () => run("records", { bytes: documents("records")[0] }));
  $("clear").addEventListener("click", () => {
    for (const name of Object.keys(inputs)) {
      inputs[name].files = [];
      $(inputs[name].file).value = "";
      $(inputs[name].box).value = "";
      note(name, "");
    }
    $("consistency-text").value = "";
    hidePicker();
    $("results").hidden = true;
    clear($("error"));
    clear($("records-result"));
    $("status").textContent = "Cleared.";
    updateButtons();
  });

  function hidePicker() {
    $("picker").hidden = true;
    clear($("server-name"));
  }

  // ---- errors ------------------------------------------------------------

  const WHERE = {
    lockfile: "The lockfile",
    lock: "The lockfile",
    second: "The second lockfile",
    tools: "The tool list",
    features: "The prompts, resources and templates document",
    keydir: "The key directory",
    keys: "An operator public key",
    now: "The check time",
    serverinfo: "The serverInfo",
    policy: "The policy",
    records: "The record or log",
    page: "The page",
    proof: "The tlog-proof",
  };
  const MEANS = {
    json_syntax: "is not JSON",
    json_invalid_utf8: "is not valid UTF-8 text",
    json_duplicate_key: "repeats a key inside one object, so it could be read two ways",
    json_lone_surrogate: "holds a \\u escape naming half a surrogate pair",
    json_too_deep: "nests deeper than 128 levels",
    json_number_out_of_range: "holds a number too large to represent",
    input_too_large: "is larger than the core's 64 MiB cap",
    lock_invalid: "does not follow its lockfile format",
    lock_unsupported: "is a lockfile version this core does not implement",
    key_invalid: "is not a key, key directory or signature the core can decode",
    tools_malformed: "is not a tool list the hashing rules accept",
    record_invalid: "is not a continuity record",
    policy_invalid: "is not a valid policy",
    bad_request: "could not be used",
    internal: "made the core fail (a bug: please report it)",
  };

  function showError(kind, where, error) {
    const box = $("error");
    clear(box);
    if (kind === "check") $("results").hidden = true;
    const what = WHERE[where] || "The input";
    const means = MEANS[error.code] || "could not be used";
    box.appendChild(
      el(
        "div",
        { class: "error-card" },
        el("h2", {}, kind === "records" ? "Could not verify" : "Could not check"),
        el("p", {}, el("strong", {}, `${what} ${means}.`), " No verdict was made."),
        el("p", {}, "The core said: ", el("code", { class: "wrap" }, error.code), " ", el("span", { class: "wrap" }, error.message || "")),
      ),
    );
    $("status").textContent = `${what} ${means}. No verdict.`;
  }

  // ---- the check's answer -----------------------------------------------

  const EFFECT_MEANS = {
    proceed: "the session goes ahead",
    proceed_recorded: "the session goes ahead under an approved exception, and the record says so",
    refresh: "check once more; if that fails, pause",
    pause_tool: "the changed tools are withheld until re-approved; the others stay usable",
    pause: "the session is paused: no tool is used until someone looks",
    deny: "the session is refused",
  };
  /**
   * How the effect's badge is coloured: by what it costs, never green for
   * less than a clean pass (docs/web.md). Red: the session stops (the
   * core's handoff hands nothing over). Amber: it goes on, but a tool is
   * withheld, the effect is anything but plain proceed (an exception
   * recorded, a refresh, one this page does not know), or in observe mode
   * enforce would have done otherwise. Green: proceed, nothing withheld.
   * The words say it too.
   */
  function effectSeverity(rec) {
    if (!rec.proceeds) return "bad";
    if (rec.withheld.length > 0 || rec.effect !== "proceed" || (rec.would && rec.would.effect !== "proceed")) return "neutral";
    return "good";
  }

  /** The record's server identity in words, with the addresses compared. */
  function identityWords(rec) {
    const approved = rec.approved_url ? code(rec.approved_url) : "no address";
    switch (rec.identity) {
      case "match":
        return ["The list came from the server the lockfile approved, ", code(rec.observed_url), "."];
      case "mismatch":
        return [el("strong", {}, "The list came from another server"), " than the lockfile approved: it approved ", approved, ", the list came from ", code(rec.observed_url), "."];
      case "not_pinned":
        return ["Which server the list came from was not compared: the lockfile names no server address."];
      case "not_observed":
        return ["Which server the list came from was not compared: give its address under “Where the list came from” (step 3) to compare it with the one the lockfile approved, ", approved, "."];
      default:
        return ["Server identity: ", el("strong", {}, rec.identity), "."];
    }
  }

  const VERDICT_MEANS = {
    unchanged: "the tools match the lockfile",
    changed: "the tools differ from the lockfile",
    unreachable: "the list could not be compared",
  };

  function dl(pairs) {
    return el(
      "dl",
      {},
      pairs.filter((p) => p && p[1] !== null && p[1] !== undefined && p[1] !== "").flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]),
    );
  }

  function code(text) {
    return el("code", { class: "wrap" }, text);
  }

  function trustBlock(t, title) {
    const good = t.trust === "verified" || t.trust === "operator_signed";
    return el(
      "div",
      { class: "block" },
      el("h3", {}, title),
      el(
        "p",
        { class: `badge ${good ? "good" : t.trust === "untrusted" ? "bad" : "neutral"}`, "data-testid": "trust" },
        el("strong", {}, t.trust),
        t.reason ? ` (${t.reason})` : "",
      ),
      dl([
        ["Format", t.format],
        ["Signed by", t.key_id ? code(t.key_id) : "no signature"],
        ["Server", t.server_name],
        ["Servers in the file", t.servers.length > 0 ? t.servers.join(", ") : null],
        ["Tools pinned", t.count === null || t.count === undefined ? null : String(t.count)],
        ["Per-part hashes", t.parts],
        ["tools_sha256", t.tools_sha256 ? code(t.tools_sha256) : null],
      ]),
    );
  }

  /** What each class of a change tells the person reading it. */
  const CLASS_SAYS = {
    concealment: "hides something from you",
    instruction: "adds an instruction to the agent",
    cross_tool: "names another tool or server",
    destination: "adds a destination (URL, address, path or account)",
    capability: "changes what the tool accepts or declares",
    documentation: "adds documentation (examples, parameter help)",
    editorial: "wording only",
  };

  /**
   * The classes of a change, strongest first as the core orders them, each
   * with the text that showed it: shown before the word diff, so the
   * dangerous change is read first and the harmless one says so.
   */
  function classList(classes, evidence) {
    return el(
      "ul",
      { class: "classes", "data-testid": "change-classes" },
      classes.map((c) => {
        const ev = evidence.find((e) => e.class === c);
        const says = CLASS_SAYS[c] || `a class this page does not know: ${c}`;
        return el("li", { class: `cls cls-${c}` }, says, ev ? ": " : "", ev ? code(ev.text) : "");
      }),
    );
  }

  function diffSegments(segs) {
    const p = el("p", { class: "desc-diff" });
    segs.forEach((s, i) => {
      if (i > 0) p.appendChild(document.createTextNode(" "));
      if (s.op === "delete") p.appendChild(el("del", {}, el("span", { class: "sr-only" }, "removed: "), s.text));
      else if (s.op === "insert") p.appendChild(el("ins", {}, el("span", { class: "sr-only" }, "added: "), s.text));
      else p.appendChild(el("span", {}, s.text));
    });
    return p;
  }

  function toolsTable(diff, record) {
    const effects = new Map((record ? record.tools : []).map((t) => [t.name, t]));
    const rows = [];
    // data-label names each cell's column where a narrow screen stacks a row.
    const td = (label, ...c) => el("td", { "data-label": label }, ...c);
    const effectCell = (name) => {
      const t = effects.get(name);
      if (!t) return td("Effect", record ? "not offered" : "—");
      return td("Effect", t.withheld ? el("strong", {}, `${t.effect} (withheld)`) : t.effect);
    };
    const row = (name, change, parts, effect) => el("tr", {}, el("th", { scope: "row" }, code(name)), td("Change", change), td("Parts", parts), effect);
    for (const name of diff.added) rows.push(row(name, "added", "the whole tool", effectCell(name)));
    for (const name of diff.removed) rows.push(row(name, "removed", "—", td("Effect", "not offered")));
    for (const m of diff.modified) {
      const parts = m.tool_changed ? "changed (the lockfile has no per-part hashes)" : m.parts.join(", ");
      rows.push(row(m.name, "modified", parts, effectCell(m.name)));
    }
    const changed = diff.added.length + diff.removed.length + diff.modified.length;
    const wrap = el("div", { class: "block" }, el("h3", {}, "Tools"));
    wrap.appendChild(
      el(
        "p",
        { "data-testid": "tool-counts" },
        `${diff.added.length} added, ${diff.removed.length} removed, ${diff.modified.length} modified`,
        diff.unchanged === null ? "; the others unchanged." : `, ${diff.unchanged} unchanged.`,
        diff.blind_parts.length > 0 ? ` Not compared (the lockfile keeps no hash of them): ${diff.blind_parts.join(", ")}.` : "",
      ),
    );
    if (changed > 0) {
      const table = el(
        "table",
        { id: "tools-table" },
        el("caption", {}, "Tools that changed, with the effect each gets"),
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Tool"), el("th", { scope: "col" }, "Change"), el("th", { scope: "col" }, "Parts"), el("th", { scope: "col" }, "Effect"))),
        el("tbody", {}, rows),
      );
      wrap.appendChild(el("div", { class: "scroll", role: "region", "aria-label": "Tools that changed", tabindex: "0" }, table));
    }
    for (const m of diff.modified) {
      if (!m.description_diff && !m.schema_paths && !m.classes) continue;
      const d = el("div", { class: "change" }, el("h4", {}, code(m.name)));
      if (m.classes) d.appendChild(classList(m.classes, m.class_evidence));
      if (m.description_diff) {
        d.appendChild(el("p", { class: "label" }, "Description, the words that moved (", el("del", {}, "removed"), ", ", el("ins", {}, "added"), "):"));
        d.appendChild(diffSegments(m.description_diff));
      }
      if (m.schema_paths) {
        d.appendChild(el("p", { class: "label" }, "Input schema, the paths that changed:"));
        d.appendChild(el("ul", { class: "paths" }, m.schema_paths.map((p) => el("li", {}, el("span", { class: `chg chg-${p.change}` }, p.change), " ", code(p.path)))));
        if (m.schema_paths_truncated) d.appendChild(el("p", { class: "hint" }, "More paths changed than are listed."));
      }
      wrap.appendChild(d);
    }
    return wrap;
  }

  /**
   * The scan of the new and changed tools, beside the diff, by tool and
   * part (or, titled and named otherwise, of the prompts, resources and
   * templates, by item).
   */
  function scanBlock(s, title = "Scan of the new and changed tools", testid = "scan") {
    const wrap = el("div", { class: "block", "data-testid": testid }, el("h3", {}, title));
    if (s.error) {
      wrap.appendChild(el("p", { class: "badge bad" }, "The scan refused: ", code(s.error.code), " ", s.error.message));
      return wrap;
    }
    wrap.appendChild(
      el(
        "p",
        { class: `badge ${s.severity === "none" || s.severity === "low" ? "good" : "bad"}`, "data-testid": `${testid}-severity` },
        s.count === 0 ? "Nothing found." : [el("strong", {}, s.severity), `: ${s.count} finding${s.count === 1 ? "" : "s"}; read the text around each before approving (docs/scan.md).`],
      ),
    );
    const byTool = new Map();
    for (const f of s.findings) {
      if (!byTool.has(f.tool)) byTool.set(f.tool, []);
      byTool.get(f.tool).push(f);
    }
    for (const [tool, fs] of byTool) {
      wrap.appendChild(
        el(
          "div",
          { class: "change" },
          el("h4", {}, code(tool)),
          el(
            "ul",
            { class: "paths" },
            fs.map((f) =>
              el("li", { "data-testid": `${testid}-finding` }, el("span", { class: `chg sev-${f.severity}` }, f.severity), " ", code(f.rule), " ", code(f.part), f.key ? " (member name)" : "", ` at ${f.offset}: `, code(f.span), f.hidden ? [" spelling ", code(f.hidden)] : ""),
            ),
          ),
        ),
      );
    }
    return wrap;
  }

  /**
   * The prompts, resources and templates the check compared: what changed
   * (the record's item observations), what is withheld, what was not
   * compared, and the scan of every item. No word diff: a lockfile keeps
   * their hashes, not their texts.
   */
  function featuresBlock(f) {
    const wrap = el("div", { class: "block", "data-testid": "features" }, el("h3", {}, "Prompts, resources and templates"));
    if (f.blind.length > 0) {
      wrap.appendChild(el("p", { class: "badge neutral", "data-testid": "features-blind" }, "Not compared (the lockfile pins none of them, or they were not given): ", ...f.blind.flatMap((b, i) => (i > 0 ? [", ", code(b)] : [code(b)])), "."));
    }
    const td = (label, ...c) => el("td", { "data-label": label }, ...c);
    if (f.observations.length === 0) {
      wrap.appendChild(el("p", { "data-testid": "features-changes" }, "No prompt, resource or template changed."));
    } else {
      const table = el(
        "table",
        { id: "features-table" },
        el("caption", {}, "Prompts, resources and templates that changed, with the effect each gets"),
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Item"), el("th", { scope: "col" }, "Observation"), el("th", { scope: "col" }, "Part"), el("th", { scope: "col" }, "Effect"))),
        el(
          "tbody",
          {},
          f.observations.map((o) => el("tr", { "data-testid": "features-change" }, el("th", { scope: "row" }, code(o.item)), td("Observation", code(o.observation)), td("Part", o.part ? code(o.part) : "—"), td("Effect", o.effect))),
        ),
      );
      wrap.appendChild(el("div", { class: "scroll", role: "region", "aria-label": "Prompts, resources and templates that changed", tabindex: "0" }, table));
      wrap.appendChild(el("p", { class: "hint" }, "No word diff: a lockfile keeps the hashes of prompts, resources and templates, not their texts. The scan below reads the text the server offers now."));
    }
    const withheld = f.items.filter((i) => !i.handed);
    wrap.appendChild(
      el("p", { "data-testid": "features-withheld" }, withheld.length === 0 ? "None is withheld." : [`Withheld (${withheld.length}): `, ...withheld.flatMap((i, n) => [n > 0 ? ", " : "", `${i.list} `, code(i.key), ` (${i.effect})`])]),
    );
    wrap.appendChild(scanBlock(f.scan, "Scan of the prompts, resources and templates", "features-scan"));
    return wrap;
  }

  async function copyText(text, what) {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Without the async clipboard (no permission): a selected text box.
      const ta = el("textarea", { class: "offscreen", readonly: true, "aria-hidden": "true" });
      ta.value = text;
      document.body.appendChild(ta);
      ta.select();
      document.execCommand("copy");
      ta.remove();
    }
    $("status").textContent = `Copied ${what}.`;
  }

  function download(text, name) {
    const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    const a = el("a", { href: url, download: name, class: "offscreen" });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
    $("status").textContent = `Downloaded ${name}.`;
  }

  function recordBlock(rec) {
    const b = el("div", { class: "block" }, el("h3", {}, "Continuity record"));
    b.appendChild(el("p", {}, "record_sha256: ", el("code", { id: "record-sha256", class: "wrap" }, rec.record_sha256)));
    const bytes = `${rec.text}\n`;
    b.appendChild(
      el(
        "div",
        { class: "actions" },
        button("Copy record_sha256", () => copyText(rec.record_sha256, "record_sha256")),
        button("Copy the record", () => copyText(bytes, "the record")),
        button("Download the record (JSON)", () => download(bytes, `crawlcheck-record-${rec.record_sha256.slice(0, 12)}.json`), "download-record"),
      ),
    );
    b.appendChild(el("details", {}, el("summary", {}, "Show the record (canonical JSON, one line)"), el("pre", { id: "record-text", class: "wrap" }, rec.text_shown)));
    return b;
  }

  function button(label, onClick, id) {
    const b = el("button", { type: "button", id }, label);
    b.addEventListener("click", onClick);
    return b;
  }

  function observationsBlock(rec) {
    return el(
      "div",
      { class: "block" },
      el("h3", {}, "Observations"),
      el(
        "ul",
        { class: "observations" },
        rec.observations.map((o) =>
          el(
            "li",
            {},
            el("strong", {}, o.observation),
            o.tool ? [" on ", code(o.tool)] : "",
            o.part ? ` (${o.part})` : "",
            `: ${o.effect}`,
            o.would ? ` (enforce would: ${o.would})` : "",
            o.override ? ", integrity override" : "",
            o.detail ? el("details", {}, el("summary", {}, "detail"), el("pre", { class: "wrap" }, o.detail)) : "",
          ),
        ),
      ),
    );
  }

  function renderCheck(r) {
    const body = $("results-body");
    clear(body);
    if (r.lists) {
      body.appendChild(el("p", { class: "badge neutral", "data-testid": "lists" }, "Two tool lists: what changed, part by part. A verdict, an effect and a record need a lockfile as the approved side."));
      body.appendChild(toolsTable(r.lists, null));
      show("Two tool lists compared.");
      return;
    }
    // The picker: an agentgate.lock with several servers.
    if (r.trust.servers_raw.length > 1) {
      const sel = $("server-name");
      const keep = r.trust.server_name_raw;
      clear(sel);
      if (!keep) sel.appendChild(el("option", { value: "" }, "choose a server…"));
      r.trust.servers_raw.forEach((raw, i) => {
        const o = el("option", {}, r.trust.servers[i]);
        o.value = raw;
        if (raw === keep) o.selected = true;
        sel.appendChild(o);
      });
      $("picker").hidden = false;
    }
    if (r.pick) {
      body.appendChild(trustBlock(r.trust, "Signature trust"));
      body.appendChild(el("p", { class: "badge neutral", "data-testid": "pick" }, `This agentgate.lock pins ${r.trust.servers.length} servers: pick one under “Server in this agentgate.lock” (step 1) to check it.`));
      show("Pick a server to check.");
      $("server-name").focus();
      return;
    }
    if (r.second_lock) {
      body.appendChild(trustBlock(r.trust, "The approved lockfile"));
      body.appendChild(trustBlock(r.second_lock, "The second lockfile"));
      const same = r.trust.tools_sha256 === r.second_lock.tools_sha256;
      body.appendChild(el("p", { class: `badge ${same ? "good" : "neutral"}`, "data-testid": "lock-vs-lock" }, same ? "Both lockfiles pin the same tools (equal tools_sha256)." : "The lockfiles pin different tools (their tools_sha256 differ)."));
      if (r.lock_vs_lock.error) {
        body.appendChild(el("p", { class: "hint" }, "Tool by tool: the core compares a lockfile with a tool list, not with another lockfile. It said: ", code(r.lock_vs_lock.error.message)));
      } else {
        body.appendChild(toolsTable(r.lock_vs_lock.diff, null));
      }
      show(same ? "Both lockfiles pin the same tools." : "The lockfiles pin different tools.");
      return;
    }
    if (!r.observed) {
      body.appendChild(trustBlock(r.trust, "Signature trust"));
      body.appendChild(el("p", { class: "hint" }, "Add what the server offers now (step 2) to check it against this lockfile."));
      show(`Lockfile read: ${r.trust.trust}.`);
      return;
    }
    const rec = r.record;
    const verdict = el("div", { class: "block verdict", "data-testid": "verdict" }, el("h3", {}, "Verdict"));
    if (r.lock_check.error) {
      verdict.appendChild(el("p", { class: "badge bad" }, "The lock check refused the lockfile: ", code(r.lock_check.error.code), " ", r.lock_check.error.message));
    } else {
      const lc = r.lock_check;
      verdict.appendChild(
        el(
          "p",
          { class: `badge ${lc.verdict === "unchanged" ? "good" : "bad"}`, "data-testid": "lock-verdict" },
          el("strong", {}, lc.verdict),
          `: ${VERDICT_MEANS[lc.verdict] || ""}; the lockfile check says `,
          el("strong", {}, lc.decision),
          ".",
          lc.unreachable ? [" ", code(lc.unreachable.reason), " ", lc.unreachable.detail] : "",
        ),
      );
    }
    if (rec) {
      verdict.appendChild(
        el(
          "p",
          { class: `badge ${effectSeverity(rec)}`, "data-testid": "effect" },
          `In ${rec.mode} mode the effect is `,
          el("strong", {}, rec.effect),
          `: ${EFFECT_MEANS[rec.effect] || ""}.`,
          rec.would ? [" Enforce would give ", el("strong", {}, rec.would.effect), "."] : "",
        ),
      );
      verdict.appendChild(
        el(
          "p",
          { "data-testid": "withheld" },
          rec.withheld.length === 0 ? "No tool is withheld." : [`Withheld (${rec.withheld.length}): `, ...rec.withheld.flatMap((n, i) => (i > 0 ? [", ", code(n)] : [code(n)]))],
        ),
      );
      // What a host hands its framework is the core's handoff: a session
      // that does not proceed hands over no tool at all.
      verdict.appendChild(
        el(
          "p",
          { "data-testid": "session" },
          rec.proceeds ? "The session proceeds with the tools not withheld." : ["The session does not proceed (", code(rec.session), "): no tool is handed over."],
        ),
      );
      if (rec.identity) verdict.appendChild(el("p", { class: rec.identity === "mismatch" ? "badge bad" : "", "data-testid": "identity" }, ...identityWords(rec)));
    } else if (r.record_error) {
      verdict.appendChild(el("p", { class: "badge bad" }, "The continuity check refused: ", code(r.record_error.code), " ", r.record_error.message));
    }
    body.appendChild(verdict);
    body.appendChild(trustBlock(r.trust, "Signature trust"));
    if (r.diff.error) body.appendChild(el("p", { class: "badge bad" }, "The diff refused: ", code(r.diff.error.code), " ", r.diff.error.message));
    else body.appendChild(toolsTable(r.diff, rec));
    if (r.scan) body.appendChild(scanBlock(r.scan));
    if (r.features) body.appendChild(featuresBlock(r.features));
    if (rec && rec.log) body.appendChild(logBlock(rec.log));
    if (rec) {
      body.appendChild(observationsBlock(rec));
      body.appendChild(recordBlock(rec));
    }
    const summary = rec ? `Checked ${rec.observed_count} tool${rec.observed_count === 1 ? "" : "s"}: ${r.lock_check.verdict || "see below"}; effect ${rec.effect}; ${rec.withheld.length} withheld.` : "Checked.";
    show(summary);
  }

  // What the check of the issuer's log found, and the checkpoint kept now.
  function logBlock(l) {
    if (l.keep_raw && l.keep_raw !== keptCheckpoint()) keepCheckpoint(l.keep_raw);
    const ok = l.included && l.consistent !== false;
    const block = el("div", { class: "block", "data-testid": "log" }, el("h3", {}, "The issuer's transparency log"));
    block.appendChild(
      el(
        "p",
        { class: `badge ${ok ? "good" : "bad"}`, "data-testid": "log-verdict" },
        l.included ? ["Included at index ", el("strong", {}, String(l.index)), " of ", code(l.origin), ", size ", String(l.size), "."] : ["NOT PROVED IN THE LOG: ", code(l.reason), "."],
        l.consistent === true ? " Consistent with the checkpoint kept." : l.consistent === false && l.reason === "consistency_unavailable" ? [" NOT SHOWN CONSISTENT with the checkpoint kept (no consistency proof to check): ", code(l.reason), "."] : l.consistent === false ? [" NOT CONSISTENT with the checkpoint kept: ", code(l.reason), "."] : l.included ? " No checkpoint was kept before: this one is kept now." : "",
      ),
    );
    block.appendChild(dl([["Checkpoint kept now", l.keep ? code(l.keep) : "none"]]));
    return block;
  }

  function show(statusText) {
    const res = $("results");
    res.hidden = false;
    $("status").textContent = statusText;
    res.focus({ preventScroll: false });
  }

  // ---- records -----------------------------------------------------------

  function renderRecords(r) {
    const out = $("records-result");
    clear(out);
    if (r.single) {
      const s = r.single;
      out.appendChild(
        el(
          "div",
          { class: "block" },
          el("p", { class: `badge ${s.valid ? "good" : "bad"}`, "data-testid": "record-valid" }, el("strong", {}, s.valid ? "valid" : "not valid"), s.reason ? ` (${s.reason})` : "", ": one record."),
          dl([
            ["record_sha256 (written)", code(s.record_sha256)],
            ["record_sha256 (recomputed)", code(s.computed_sha256)],
          ]),
        ),
      );
      $("status").textContent = s.valid ? "The record is valid." : "The record is not valid.";
      out.focus();
      return;
    }
    const c = r.chain;
    const block = el(
      "div",
      { class: "block" },
      el(
        "p",
        { class: `badge ${c.valid ? "good" : "bad"}`, "data-testid": "chain-valid" },
        el("strong", {}, c.valid ? "valid chain" : "broken chain"),
        `: ${c.count} record${c.count === 1 ? "" : "s"}`,
        c.broken_at !== null ? `, broken at record ${c.broken_at + 1}` : "",
        c.reason ? ` (${c.reason})` : "",
        c.torn_tail ? "; the last line was cut off mid-write and is set aside" : "",
        ".",
      ),
      dl([["Head", c.head ? code(c.head) : null]]),
    );
    const rows = r.each.map((x) =>
      el(
        "tr",
        {},
        el("th", { scope: "row" }, String(x.line)),
        el("td", {}, x.error ? (x.torn ? "torn (set aside)" : "not a record") : x.valid ? "valid" : "not valid"),
        el("td", {}, x.error ? [code(x.error.code), " ", x.error.message] : [code(x.record_sha256), x.reason ? ` (${x.reason})` : ""]),
      ),
    );
    block.appendChild(
      el(
        "div",
        { class: "scroll", role: "region", "aria-label": "Each record of the log", tabindex: "0" },
        el("table", {}, el("caption", {}, "Each record"), el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Line"), el("th", { scope: "col" }, "Record"), el("th", { scope: "col" }, "record_sha256"))), el("tbody", {}, rows)),
      ),
    );
    out.appendChild(block);
    $("status").textContent = c.valid ? `The log is a valid chain of ${c.count} records.` : "The log's chain is broken.";
    out.focus();
  }

  // ---- start ---------------------------------------------------------------

  $("now").value = new Date().toISOString();
  if (typeof CRAWLCHECK_WASM_BASE64 !== "string" || typeof CRAWLCHECK_WORKER_SOURCE !== "string") {
    showFatal("gen/crawlcheck-web.js is missing: build it with `make web` (or node web/build.mjs).");
    return;
  }
  updateButtons();
  startWorker();
})();

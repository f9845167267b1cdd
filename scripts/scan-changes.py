#!/usr/bin/env python3
"""Regenerate the unlabelled text changes between consecutive published releases.

    scripts/scan-changes.py testdata/scan-changes/sources.json CACHE_DIR > changes.jsonl

sources.json names, per public MCP server, its registry, package, the
releases to take (consecutive published versions, oldest first), the
arguments and environment it starts with (dummy keys: tools/list needs no
account), the extra packages an old release needs to start, and
replacements (regular expression, text) for what a server writes into a
text from the machine it runs on. For each
release this installs the package with the registry's ordinary client (npm
install into CACHE_DIR/<package>@<version>, pip install into a venv there),
starts it and takes its tools/list with scripts/capture-tools.py (kept as
CACHE_DIR/.../capture.json, so a second run reads it again instead of
installing; a release that did not install or start leaves failed.txt
there, read the same way), then compares each release with the one before it that
started: every tool in both whose description or title changed, and the
server's instructions, one JSON object a line, with an empty label. The
labels are a person's (testdata/scan-changes/labelled.json); this script
never writes them. A release that does not install or start is said on
stderr and skipped (the pair then spans it: its 'from' names the release
compared).
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 300


def run(cmd: list, **kw) -> bool:
    try:
        return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=TIMEOUT, **kw).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def npm_command(src: dict, ver: str, root: str) -> list:
    """Install one npm release (and the extra packages it names) and return
    the command that starts its bin."""
    pkg = src["package"]
    if not os.path.exists(os.path.join(root, "node_modules", pkg, "package.json")):
        os.makedirs(root, exist_ok=True)
        if not run(["npm", "install", "--prefix", root, "--ignore-scripts", "--no-audit",
                    "--no-fund", "--loglevel=error", f"{pkg}@{ver}", *src.get("extra", [])]):
            return []
    meta = json.load(open(os.path.join(root, "node_modules", pkg, "package.json")))
    bins = meta.get("bin")
    if isinstance(bins, dict):
        bins = bins.get(src.get("bin", ""), next(iter(bins.values()), None))
    if not bins:
        return []
    return ["node", os.path.join(root, "node_modules", pkg, bins), *src.get("args", [])]


def pypi_command(src: dict, ver: str, root: str) -> list:
    """Install one PyPI release into its own venv and return the command
    that starts its console script."""
    pkg = src["package"]
    venv = os.path.join(root, "venv")
    exe = os.path.join(venv, "bin", src.get("bin", pkg))
    if not os.path.exists(exe):
        os.makedirs(root, exist_ok=True)
        if not (run([sys.executable, "-m", "venv", venv]) and
                run([os.path.join(venv, "bin", "pip"), "install", "-q", f"{pkg}=={ver}",
                     *src.get("extra", [])])):
            return []
    return [exe, *src.get("args", [])]


def fail(failed: str, why: str) -> None:
    """Say why a release is skipped, and keep it beside where its capture
    would be, so that a second run skips it without installing it again."""
    print(why, file=sys.stderr)
    os.makedirs(os.path.dirname(failed), exist_ok=True)
    with open(failed, "w") as f:
        f.write(why + "\n")


def capture(src: dict, ver: str, cache: str):
    """The release's capture, taken once and kept in the cache."""
    root = os.path.join(cache, src["registry"], src["package"].replace("/", "+") + "@" + ver)
    path, failed = os.path.join(root, "capture.json"), os.path.join(root, "failed.txt")
    if os.path.exists(path):
        return json.load(open(path))
    if os.path.exists(failed):  # kept, like a capture: delete the directory to try again
        print(open(failed).read().strip(), file=sys.stderr)
        return None
    cmd = (npm_command if src["registry"] == "npm" else pypi_command)(src, ver, root)
    if not cmd:
        return fail(failed, f"{src['package']}@{ver}: did not install")
    env = dict(os.environ, **src.get("env", {}))
    label = f"{src['registry']} {src['package']}@{ver}"
    out = subprocess.run([sys.executable, os.path.join(HERE, "capture-tools.py"), src["package"],
                          label, "--", *cmd], capture_output=True, env=env, cwd=root)
    if out.returncode != 0:
        return fail(failed, f"{label}: did not start: {out.stderr.decode(errors='replace').strip()[-300:]}")
    with open(path, "wb") as f:
        f.write(out.stdout)
    return json.loads(out.stdout)


def texts(cap: dict, replace: list) -> dict:
    """(tool, field) -> text, for the texts a change class is given for,
    with the source's replacements made: the parts of a text a server
    writes from the machine it runs on (desktop-commander lists the
    container's mount points), which are neither the release's nor
    anyone's to keep."""
    out = {}
    if cap.get("instructions"):
        out[("", "instructions")] = cap["instructions"]
    for t in cap["tools"]:
        out[(t["name"], "description")] = t.get("description") or ""
        title = t.get("title") or (t.get("annotations") or {}).get("title")
        if title:
            out[(t["name"], "title")] = title
    for key, text in out.items():
        for pattern, repl in replace:
            text = re.sub(pattern, repl, text)
        out[key] = text
    return out


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sources = json.load(open(sys.argv[1]))["sources"]
    cache = sys.argv[2]
    for src in sources:
        prev = None
        for ver in src["versions"]:
            cap = capture(src, ver, cache)
            if cap is None:
                continue
            if prev is not None:
                old, new = texts(prev, src.get("replace", [])), texts(cap, src.get("replace", []))
                for key, text in new.items():
                    if key in old and old[key] != text:
                        print(json.dumps({"from": prev["package"], "to": cap["package"],
                                          "tool": key[0], "field": key[1], "old": old[key],
                                          "new": text, "label": []}, ensure_ascii=False))
                sys.stdout.flush()
            prev = cap


if __name__ == "__main__":
    main()

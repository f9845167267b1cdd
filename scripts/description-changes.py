#!/usr/bin/env python3
"""List the description changes between two captures of one server.

    scripts/description-changes.py old.json new.json >> changes.json

Both files are captures of scripts/capture-tools.py (the same server at two
releases). For every tool in both whose description differs, it prints one
JSON object a line: the packages, the tool, both descriptions and an empty
label, to be filled by a person (testdata/scan-changes, docs/scan.md,
"Change classes": the classes the change introduces, strongest first).
"""
import json
import sys


def main() -> None:
    old, new = (json.load(open(p)) for p in sys.argv[1:3])
    before = {t["name"]: t for t in old["tools"]}
    for t in new["tools"]:
        o = before.get(t["name"])
        if o is None or o.get("description", "") == t.get("description", ""):
            continue
        print(json.dumps({"from": old["package"], "to": new["package"], "tool": t["name"],
                          "old": o.get("description", ""), "new": t.get("description", ""),
                          "label": []}, ensure_ascii=False))


if __name__ == "__main__":
    main()

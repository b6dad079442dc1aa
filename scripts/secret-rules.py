#!/usr/bin/env python3
"""Regenerate src/secrets/gitleaks.json from gitleaks' default rule set.

    python3 scripts/secret-rules.py path/to/gitleaks/config/gitleaks.toml

The rules are gitleaks' (MIT, Copyright (c) 2019 Zachary Rice; the license is
in src/secrets/LICENSE-gitleaks). This keeps what a scan of text needs: each
rule's id, regex, secret group, entropy threshold, keywords and allow-lists
(regexes, their target, stopwords). Rules that match file paths, and
allow-lists made only of paths, are left out: a session holds text, not a
tree of named files. The global allow-list's value regexes and stopwords
are kept as "global".
"""
import json
import sys
import tomllib

src = sys.argv[1]
with open(src, "rb") as f:
    config = tomllib.load(f)


def allowlist(a):
    if a.get("paths") and a.get("condition", "OR").upper() == "AND":
        # Needs a path to hold as well: never holds for text.
        return None
    out = {}
    if a.get("regexes"):
        out["regexes"] = a["regexes"]
        out["target"] = a.get("regexTarget", "secret")
    if a.get("stopwords"):
        out["stopwords"] = [s.lower() for s in a["stopwords"]]
    return out or None


rules = []
skipped = []
for r in config["rules"]:
    if "path" in r or "regex" not in r:
        skipped.append(r["id"])
        continue
    rule = {"id": r["id"], "regex": r["regex"], "keywords": [k.lower() for k in r.get("keywords", [])]}
    if "secretGroup" in r:
        rule["group"] = r["secretGroup"]
    if "entropy" in r:
        rule["entropy"] = r["entropy"]
    lists = [a for a in map(allowlist, r.get("allowlists", [])) if a]
    if lists:
        rule["allow"] = lists
    rules.append(rule)

g = config.get("allowlist", {})
out = {
    "source": "gitleaks " + config.get("minVersion", "") + " config/gitleaks.toml",
    "skipped": skipped,
    "global": {"regexes": g.get("regexes", []), "stopwords": [s.lower() for s in g.get("stopwords", [])]},
    "rules": rules,
}
json.dump(out, sys.stdout, indent=1)
sys.stdout.write("\n")

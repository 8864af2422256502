#!/usr/bin/env python3
"""Fails when two top-level modules of one crate use each other (`crate::a` in b and
`crate::b` in a): each crate's modules form layers too. Comments and test modules are not
counted. Run by scripts/check-layers."""
import glob
import os
import re
import sys


def code_of(path):
    text = open(path, encoding="utf-8").read()
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    return "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//"))


def modules(src):
    out = {}
    for entry in sorted(os.listdir(src)):
        name = entry[:-3] if entry.endswith(".rs") else entry
        if name in ("lib", "main", "mod"):
            continue
        path = os.path.join(src, entry)
        files = [path] if entry.endswith(".rs") else glob.glob(os.path.join(path, "**/*.rs"), recursive=True)
        uses = set()
        for f in files:
            uses.update(re.findall(r"\bcrate::([a-z_][a-z0-9_]*)", code_of(f)))
        uses.discard(name)
        out[name] = uses
    return out


failed = False
for src in sorted(glob.glob("crates/*/src")) + ["src"]:
    mods = modules(src)
    for a in mods:
        for b in mods[a]:
            if b in mods and a in mods[b] and a < b:
                print(f"layers: in {src}, modules `{a}` and `{b}` use each other", file=sys.stderr)
                failed = True
sys.exit(1 if failed else 0)

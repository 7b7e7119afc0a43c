#!/usr/bin/env python3
"""Maps each rustc error in LOG (the output of building a crate gen.py wrote in OUTDIR) back to
the protocol module it stands in, and prints the first few errors of each.

usage: classify.py OUTDIR LOG"""
import re, sys
d = sys.argv[1]; log = sys.argv[2]
lines = open(f"{d}/src/lib.rs").read().split("\n")
mods = []; cur = None
for l in lines:
    m = re.match(r"pub mod ([mb]\d+) \{", l)
    if m: cur = m.group(1)
    mods.append(cur)
log = open(log).read()
bad = {}
for m in re.finditer(r"^(error[^\n]*)\n\s*--> ([^:\n]+):(\d+)", log, re.M):
    f, ln = m.group(2), int(m.group(3))
    if f == "src/lib.rs": mod = mods[ln-1]
    else: mod = f.split("/")[-1]
    bad.setdefault(mod, set()).add(m.group(1)[:110])
for k,v in sorted(bad.items()):
    print(k, sorted(v)[:3])
print(len(bad))

#!/usr/bin/env python3
"""No import cycles between the modules of a crate.

For every crate under crates/, reads each top-level module's non-test source (a file up to its
`#[cfg(test)] mod tests`, comments dropped) and records which sibling modules it names
(`crate::m`, `crate::{m, ...}`, `super::m` from a top-level file, `super::super::m` one level
down). A child module naming its parent is not an edge: only siblings count. Fails on any set
of modules that import each other in a ring, except the known ones listed below (which may
only shrink).
"""
import os
import re
import sys

# Known cycles, as crate: module set. Remove an entry when its cycle is broken.
KNOWN = {
    ("swarm", frozenset({"nav", "script", "sim"})),
}

COMMENT = re.compile(r"//[^\n]*")
CRATE_PATH = re.compile(r"crate::(\w+)|crate::\{([^}]*)\}")


def modules(src):
    """Module path (as a tuple) -> source text, binaries left out."""
    out = {}
    for d, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(d, f), src)[:-3].split(os.sep)
            if rel[0] == "bin":
                continue
            if rel[-1] in ("lib", "main", "mod"):
                rel = rel[:-1]
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                out[tuple(rel)] = fh.read()
    return out


def edges(mods):
    tops = {p[0] for p in mods if p}
    graph = {}
    for path, text in mods.items():
        if not path:
            continue
        cut = text.find("#[cfg(test)]\nmod tests")
        if cut >= 0:
            text = text[:cut]
        text = COMMENT.sub("", text)
        me = path[0]
        names = []
        for m in CRATE_PATH.finditer(text):
            names += [m.group(1)] if m.group(1) else re.findall(r"(\w+)\s*(?:::|,|$)", m.group(2))
        if len(path) == 1:
            names += re.findall(r"\bsuper::(\w+)", text)
        elif len(path) == 2:
            names += re.findall(r"\bsuper::super::(\w+)", text)
        for n in names:
            if n in tops and n != me:
                graph.setdefault(me, set()).add(n)
    return tops, graph


def cycles(tops, graph):
    """Strongly connected sets of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(frozenset(comp))

    for v in sorted(tops):
        if v not in index:
            visit(v)
    return found


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates")
    bad = 0
    seen = set()
    for crate in sorted(os.listdir(root)):
        src = os.path.join(root, crate, "src")
        if not os.path.isdir(src):
            continue
        tops, graph = edges(modules(src))
        for comp in cycles(tops, graph):
            if (crate, comp) in KNOWN:
                seen.add((crate, comp))
                continue
            bad += 1
            ring = ", ".join(
                f"{a} -> {sorted(graph[a] & comp)}" for a in sorted(comp)
            )
            print(f"crates/{crate}: modules import each other: {ring}", file=sys.stderr)
    for crate, comp in sorted(KNOWN - seen, key=lambda k: (k[0], sorted(k[1]))):
        bad += 1
        print(
            f"crates/{crate}: the ring {sorted(comp)} is broken: remove it from KNOWN",
            file=sys.stderr,
        )
    if bad:
        print(
            "break the cycle (move the shared part below both modules, or make one a child "
            "of the other) or, if it must stay, list it in .ci/import-cycles.py",
            file=sys.stderr,
        )
        sys.exit(1)


if __name__ == "__main__":
    main()

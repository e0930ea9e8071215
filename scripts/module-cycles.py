#!/usr/bin/env python3
"""Lists the import cycles between the top-level modules of each crate under services/.

An edge A -> B is a `crate::B` path (in a `use` or in an expression) written in module A's
files (A.rs, A/**.rs). Items defined in lib.rs count as module `lib`, and `pub use` in lib.rs
makes lib depend on the module it re-exports. A cycle is a strongly connected component of
more than one module. Exit 1 when any crate has one (unless --report), naming each cycle with
one edge of it per line: `file:line` of the `crate::` path that closes it.

Usage: scripts/module-cycles.py [--report] [crate-dir ...]
"""
import os
import re
import sys

PATH = re.compile(r"\bcrate::(\{)?\s*([A-Za-z_][A-Za-z0-9_]*)")
BRACED = re.compile(r"\bcrate::\{([^}]*)\}", re.S)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def crate_modules(src):
    lib = os.path.join(src, "lib.rs")
    if not os.path.exists(lib):
        lib = os.path.join(src, "main.rs")
    mods = set()
    with open(lib, encoding="utf-8") as f:
        for m in re.finditer(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_0-9]+)\s*;", f.read(), re.M):
            mods.add(m.group(1))
    return lib, mods


def module_of(src, path, lib):
    rel = os.path.relpath(path, src)
    if os.path.abspath(path) == os.path.abspath(lib):
        return "lib"
    first = rel.split(os.sep)[0]
    return first[:-3] if first.endswith(".rs") else first


def edges_of(src):
    lib, mods = crate_modules(src)
    edges = {}
    for root, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs") or name == "tests.rs":
                continue
            path = os.path.join(root, name)
            here = module_of(src, path, lib)
            with open(path, encoding="utf-8") as f:
                text = strip_comments(f.read())
            # `#[cfg(test)] mod tests { ... }` at the end of a file is test code, not structure.
            cut = re.search(r"#\[cfg\(test\)\]\s*mod\s+tests\b", text)
            if cut:
                text = text[: cut.start()]
            targets = []
            for m in BRACED.finditer(text):
                for part in m.group(1).split(","):
                    head = part.strip().split("::")[0].strip()
                    if head:
                        targets.append((head, text.count("\n", 0, m.start()) + 1))
            for m in PATH.finditer(text):
                if m.group(1):
                    continue
                targets.append((m.group(2), text.count("\n", 0, m.start()) + 1))
            if here == "lib":
                for m in re.finditer(r"pub\s+use\s+([a-z_0-9]+)::", text):
                    targets.append((m.group(1), text.count("\n", 0, m.start()) + 1))
            for head, line in targets:
                there = head if head in mods else "lib"
                if there == here:
                    continue
                edges.setdefault(here, {}).setdefault(there, f"{os.path.relpath(path)}:{line}")
    return edges


def sccs(edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    nodes = set(edges) | {b for a in edges for b in edges[a]}

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv):
    report = "--report" in argv
    dirs = [a for a in argv if not a.startswith("--")]
    if not dirs:
        base = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "services")
        dirs = sorted(os.path.join(base, d, "src") for d in os.listdir(base))
    found = 0
    for src in dirs:
        if os.path.isdir(os.path.join(src, "src")):
            src = os.path.join(src, "src")
        edges = edges_of(src)
        for comp in sccs(edges):
            found += 1
            print(f"{os.path.relpath(src)}: cycle {' <-> '.join(comp)}")
            for a in comp:
                for b in comp:
                    if b in edges.get(a, {}):
                        print(f"  {a} -> {b}  ({edges[a][b]})")
    print(f"module-cycles: {found} cycle(s)", file=sys.stderr)
    return 0 if report or found == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

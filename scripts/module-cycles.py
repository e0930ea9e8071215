#!/usr/bin/env python3
# module-cycles.py: finds import cycles between the modules of each crate under services/.
#
# Every module file of a crate (found from the `mod x;` declarations, starting at src/lib.rs or
# src/main.rs) gets its module path: the root is `crate`, src/foo.rs and src/foo/mod.rs are
# `foo`, src/foo/bar.rs is `foo::bar`; inline `mod x { .. }` blocks belong to their file's module.
# An edge A -> B is a path written in A, outside comments and string literals, that resolves to
# module B (the longest prefix of the path that is a module): `use crate::..` (grouped and nested
# braces included), `crate::a::f(..)` in code, `super::..`, `self::..`, and a path starting with
# a child module's name (so `pub use foo::Bar;` in lib.rs is an edge crate -> foo). `mod x;`
# itself is not an edge. Test code is left out: `#[cfg(test)] mod x { .. }` blocks and
# `#[cfg(test)] mod x;` files. A cycle is a strongly connected component of more than one
# module; each is printed with one shortest cycle through it, every edge of that cycle with the
# `file:line` and path that make it.
#
# Usage: scripts/module-cycles.py [--crate NAME] [--ignore-root] [--edges]
#   --crate NAME   only this crate (directory or package name, e.g. billing-store)
#   --ignore-root  drop the edges into the crate root (items of lib.rs/main.rs)
#   --edges        also list every edge inside each cycle, not only those of the shortest cycle
# Exit status: 0 with `module cycles: none`, 1 when a cycle is found, 2 on a usage error.
# CI: run from anywhere as `python3 scripts/module-cycles.py` (standard library only, no build
# needed); exit status 1 fails the job. scripts/test runs it with --ignore-root before the tests.
import argparse
import os
import re
import sys
from collections import deque

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
ROOT = ()  # the module path of the crate root


def blank(text):
    """Returns text with comments, string and char literals replaced by spaces (newlines kept)."""
    out = list(text)
    n = len(text)
    i = 0

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    def ident_char(k):
        return 0 <= k < n and (text[k].isalnum() or text[k] == "_")

    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif c == "/" and text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            wipe(i, j)
            i = j
        elif c in "rbc" and not ident_char(i - 1):
            # raw strings: r"..", r#".."#, br#".."#, cr".."
            m = re.compile(r"(?:b|c)?r(#*)\"").match(text, i)
            if m:
                end = text.find('"' + m.group(1), m.end())
                end = n if end < 0 else end + 1 + len(m.group(1))
                wipe(i, end)
                i = end
            else:
                i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            wipe(i, j + 1)
            i = j + 1
        elif c == "'":
            if text.startswith("\\", i + 1):  # '\n', '\'', '\u{..}'
                j = text.find("'", i + 3)
                j = n if j < 0 else j
                wipe(i, j + 1)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":  # 'x'
                wipe(i, i + 3)
                i += 3
            else:  # a lifetime
                i += 1
        else:
            i += 1
    return "".join(out)


def matching_brace(code, open_at):
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(code) - 1


ATTRS = r"(?:#\s*\[[^\]]*\]\s*)*"
VIS = r"(?:pub\s*(?:\([^)]*\))?\s*)?"
TEST_MOD = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]\s*" + ATTRS + VIS + r"mod\s+(" + IDENT + r")\s*([{;])")
MOD_DECL = re.compile(r"(?<![\w$])" + VIS + r"mod\s+(" + IDENT + r")\s*([{;])")


def strip_tests(code):
    """Blanks the #[cfg(test)] mod blocks; returns (code, names of #[cfg(test)] `mod x;` files)."""
    test_files = set()
    while True:
        m = TEST_MOD.search(code)
        if not m:
            return code, test_files
        end = matching_brace(code, m.end() - 1) + 1 if m.group(2) == "{" else m.end()
        if m.group(2) == ";":
            test_files.add(m.group(1))
        code = code[: m.start()] + re.sub(r"[^\n]", " ", code[m.start():end]) + code[end:]


class Module:
    def __init__(self, path, file, code, inline_spans, children):
        self.path = path  # tuple of names, () for the root
        self.file = file
        self.code = code
        self.inline_spans = inline_spans  # (start, end) of inline `mod x { .. }` blocks
        self.children = children  # names of the `mod x;` files declared here

    def depth_at(self, pos):
        return sum(1 for a, b in self.inline_spans if a < pos < b)


def load_crate(src):
    """Returns {module path: Module} for the crate whose sources are in src, and warnings."""
    root_file = None
    for name in ("lib.rs", "main.rs"):
        if os.path.exists(os.path.join(src, name)):
            root_file = os.path.join(src, name)
            break
    if root_file is None:
        return {}, [f"{src}: no lib.rs or main.rs"]
    modules, warnings = {}, []
    todo = [((), root_file)]
    while todo:
        path, file = todo.pop()
        with open(file, encoding="utf-8") as f:
            code, test_files = strip_tests(blank(f.read()))
        children, spans = [], []
        for m in MOD_DECL.finditer(code):
            if m.group(2) == "{":
                spans.append((m.end() - 1, matching_brace(code, m.end() - 1)))
            elif any(a < m.start() < b for a, b in spans):
                warnings.append(f"{file}: `mod {m.group(1)};` inside an inline module is not followed")
            else:
                children.append(m.group(1))
        modules[path] = Module(path, file, code, spans, children)
        base = os.path.basename(file)
        here = os.path.dirname(file) if base in ("lib.rs", "main.rs", "mod.rs") else file[:-3]
        for child in children:
            candidates = [os.path.join(here, child + ".rs"), os.path.join(here, child, "mod.rs")]
            found = [c for c in candidates if os.path.exists(c)]
            if not found:
                warnings.append(f"{file}: no file for `mod {child};`")
                continue
            todo.append((path + (child,), found[0]))
    # .rs files that no declaration reaches (other than test-only ones and src/bin) are reported
    reached = {os.path.abspath(m.file) for m in modules.values()}
    for dirpath, dirnames, files in os.walk(src):
        dirnames[:] = [d for d in dirnames if d not in ("target", "bin")]
        for name in files:
            full = os.path.abspath(os.path.join(dirpath, name))
            if name.endswith(".rs") and full not in reached and name not in ("main.rs", "lib.rs"):
                if not is_test_file(full, modules):
                    warnings.append(f"{os.path.relpath(full)}: not declared as a module (ignored)")
    return modules, warnings


def is_test_file(full, modules):
    """True when the file is a `#[cfg(test)] mod x;` of a loaded module (or below one)."""
    for m in modules.values():
        base = os.path.basename(m.file)
        here = os.path.dirname(m.file) if base in ("lib.rs", "main.rs", "mod.rs") else m.file[:-3]
        with open(m.file, encoding="utf-8") as f:
            _, test_files = strip_tests(blank(f.read()))
        for t in test_files:
            if full in (os.path.abspath(os.path.join(here, t + ".rs")),) or full.startswith(
                os.path.abspath(os.path.join(here, t)) + os.sep
            ):
                return True
    return False


# ---- paths --------------------------------------------------------------------------------

TOKEN = re.compile(r"\s*(::|" + IDENT + r"|[{},*;]|.)", re.S)
USE = re.compile(r"(?<![\w$])use\s")


def use_paths(code, start):
    """Parses the use tree from `start` (just after `use`); returns ([(segments, pos)], end)."""
    tokens, pos = [], start
    while pos < len(code):
        m = TOKEN.match(code, pos)
        if not m:
            break
        tokens.append((m.group(1), m.start(1)))
        pos = m.end()
        if m.group(1) == ";":
            break
    k = 0
    out = []

    def tree(prefix, prefix_pos):
        nonlocal k
        segs, first = list(prefix), prefix_pos
        while k < len(tokens):
            tok, at = tokens[k]
            if tok == "{":
                k += 1
                while k < len(tokens) and tokens[k][0] != "}":
                    tree(segs, first)
                    if k < len(tokens) and tokens[k][0] == ",":
                        k += 1
                k += 1
                return
            if tok == "::":
                k += 1
                continue
            if tok == "*":
                k += 1
                break
            if re.fullmatch(IDENT, tok) and tok != "as":
                first = at  # the line of the path's last name, where a grouped import names it
                if tok == "self" and segs:  # `a::{self, ..}` is `a` itself
                    k += 1
                    continue
                segs.append(tok)
                k += 1
                continue
            if tok == "as":
                k += 2
            break
        if segs:
            out.append((segs, first))

    tree([], None)
    return out, pos


CODE_PATH = re.compile(r"(?<![\w$:])(" + IDENT + r")((?:\s*::\s*" + IDENT + r")+)")


def resolve(mod, modules, segs, pos):
    """Returns the module a path written at `pos` in `mod` refers to, or None (another crate)."""
    depth = mod.depth_at(pos)
    if segs[0] == "crate":
        base, rest = ROOT, segs[1:]
    elif segs[0] in ("super", "self"):
        base, rest = mod.path, segs
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                if depth:
                    depth -= 1  # leaves an inline module, stays in this file's module
                elif base:
                    base = base[:-1]
            rest = rest[1:]
    elif depth == 0 and segs[0] in mod.children:
        base, rest = mod.path, segs
    else:
        return None
    target = base
    for i in range(len(rest)):
        if base + tuple(rest[: i + 1]) in modules:
            target = base + tuple(rest[: i + 1])
        else:
            break
    return target


def crate_edges(modules):
    """Returns {a: {b: [(file, line, path text)]}} over module paths."""
    edges = {}
    for mod in modules.values():
        code = re.sub(r"pub\s*\(\s*in\s[^)]*\)", lambda m: " " * len(m.group(0)), mod.code)
        found = []
        for m in USE.finditer(code):
            paths, end = use_paths(code, m.end())
            for segs, at in paths:
                found.append((segs, at if at is not None else m.start()))
            code = code[: m.start()] + re.sub(r"[^\n]", " ", code[m.start():end]) + code[end:]
        for m in CODE_PATH.finditer(code):
            segs = [m.group(1)] + re.findall(IDENT, m.group(2))
            found.append((segs, m.start()))
        for segs, at in found:
            if segs[0] not in ("crate", "super", "self") and segs[0] not in mod.children:
                continue
            target = resolve(mod, modules, segs, at)
            if target is None or target == mod.path:
                continue
            line = mod.code.count("\n", 0, at) + 1
            edges.setdefault(mod.path, {}).setdefault(target, []).append(
                (os.path.relpath(mod.file), line, "::".join(segs))
            )
    return edges


# ---- cycles -------------------------------------------------------------------------------


def sccs(nodes, edges):
    """Tarjan, iterative; returns the components of more than one node."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, {}))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
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
    return out


def shortest_cycle(comp, edges):
    members, best = set(comp), None
    for s in sorted(comp):
        prev, queue = {s: None}, deque([s])
        while queue:
            v = queue.popleft()
            for w in sorted(edges.get(v, {})):
                if w == s:
                    cycle = [v]
                    while prev[cycle[-1]] is not None:
                        cycle.append(prev[cycle[-1]])
                    cycle = cycle[::-1] + [s]
                    if best is None or len(cycle) < len(best):
                        best = cycle
                    queue.clear()
                    break
                if w in members and w not in prev:
                    prev[w] = v
                    queue.append(w)
    return best


def name(path):
    return "::".join(path) if path else "crate"


def main(argv):
    ap = argparse.ArgumentParser(description="Lists import cycles between the modules of each crate.")
    ap.add_argument("--crate", help="only this crate (directory or package name)")
    ap.add_argument("--ignore-root", action="store_true", help="ignore edges into the crate root")
    ap.add_argument("--edges", action="store_true", help="list every edge inside each cycle")
    args = ap.parse_args(argv)
    services = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "services")
    services = os.path.normpath(services)
    os.chdir(os.path.dirname(services))
    crates = sorted(d for d in os.listdir(services) if os.path.isdir(os.path.join(services, d, "src")))
    if args.crate:
        want = args.crate.replace("_", "-")
        crates = [c for c in crates if c.replace("_", "-") == want]
        if not crates:
            print(f"module-cycles: no crate {args.crate!r} under services/", file=sys.stderr)
            return 2
    total, crates_with = 0, 0
    for crate in crates:
        modules, warnings = load_crate(os.path.join("services", crate, "src"))
        for w in warnings:
            print(f"warning: {w}", file=sys.stderr)
        edges = crate_edges(modules)
        if args.ignore_root:
            for a in edges:
                edges[a].pop(ROOT, None)
        comps = sccs(set(modules), edges)
        if comps:
            crates_with += 1
        for comp in comps:
            total += 1
            cycle = shortest_cycle(comp, edges)
            if len(comp) == 2:
                print(f"{crate}: {' -> '.join(name(p) for p in cycle)}")
            else:
                print(f"{crate}: {len(comp)} modules in a cycle: {', '.join(name(p) for p in comp)}")
                print(f"  shortest: {' -> '.join(name(p) for p in cycle)}")
            shown = set(zip(cycle, cycle[1:]))
            if args.edges:
                shown = {(a, b) for a in comp for b in comp if b in edges.get(a, {})}
            for a, b in sorted(shown):
                uses = edges[a][b]
                more = f" (+{len(uses) - 1} more)" if len(uses) > 1 else ""
                file, line, text = uses[0]
                print(f"    {name(a)} -> {name(b)}: {file}:{line} {text}{more}")
    if total:
        print(f"module cycles: {total} in {crates_with} crate{'s' if crates_with != 1 else ''}")
        return 1
    print("module cycles: none")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

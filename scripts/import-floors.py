#!/usr/bin/env python3
"""Modules are floors: inside a crate, no module imports from one above it.

Draws each crate's module graph from its `use` declarations and its inline `crate::` and
`super::` paths (test modules, comments and doc comments left out) and reports every cycle
between sibling modules: a cycle means two modules each sit above the other, so neither can
be read first. Exits 1 when it finds a cycle that is not one of the accepted floors below.

    python3 scripts/import-floors.py [ROOT]
"""
import collections
import glob
import os
import re
import sys

# Clusters that are one floor, each argued (see docs/README.md, "Inside each crate").
ACCEPTED = {
    # The captured program's data model: a struct's layout lists its methods, a method is a
    # captured function whose signature names layouts. Types that refer to each other; no
    # behaviour in the cycle.
    ("dsl-core", frozenset({"ast", "captured", "constant", "device", "ir", "layout", "methods"})),
}

# Modules whose rooms are one floor, whatever cycles they form among themselves: a recursive
# descent parser's rooms are `impl Parser` blocks that call each other as the grammar nests
# (a statement holds expressions, an expression a closure, a closure statements).
ACCEPTED_ROOMS = {("macros", "parse::")}


def crates(root):
    for toml in sorted(glob.glob(os.path.join(root, "**/Cargo.toml"), recursive=True)):
        if "/target" in toml or "/.git" in toml:
            continue
        crate = os.path.dirname(toml)
        if os.path.isdir(os.path.join(crate, "src")):
            yield crate


def module_of(src, path):
    parts = os.path.relpath(path, src)[:-3].split("/")
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return parts


def expand(tree):
    """`a::{b, c::{d}}` → `a::b`, `a::c::d`."""
    brace = tree.find("{")
    if brace < 0:
        return [tree.split(" as ")[0]]
    prefix, body = tree[:brace], tree[brace + 1 : tree.rfind("}")]
    items, depth, current = [], 0, ""
    for ch in body:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += ch
    if current:
        items.append(current)
    out = []
    for item in items:
        out += [prefix.rstrip(":")] if item == "self" else expand(prefix + item)
    return out


def resolve(module, path):
    parts = path.split("::")
    if parts[0] == "crate":
        return parts[1:]
    if parts[0] == "self":
        return module + parts[1:]
    base = module
    while parts and parts[0] == "super":
        base, parts = base[:-1], parts[1:]
    return base + parts


def paths_in(text):
    cut = text.find("#[cfg(test)]\nmod tests")
    if cut >= 0:
        text = text[:cut]
    text = re.sub(r"//[^\n]*", "", text)
    found = []
    for m in re.finditer(r"\buse\s+((?:crate|super|self)[^;]*);", text, re.S):
        found += expand(re.sub(r"\s+", "", m.group(1)))
    body = re.sub(r"\buse\s+[^;]*;", "", text)
    found += re.findall(r"\b(?:crate|super)(?:::(?:super|[a-z_][a-z0-9_]*))+", body)
    return found


def cycles(src):
    files = glob.glob(os.path.join(src, "**/*.rs"), recursive=True)
    modules = {tuple(module_of(src, f)) for f in files}
    edges = collections.defaultdict(set)
    for f in files:
        here = module_of(src, f)
        with open(f, encoding="utf-8") as handle:
            text = handle.read()
        for path in paths_in(text):
            target = resolve(here, path)
            while target and tuple(target) not in modules:
                target = target[:-1]
            common = 0
            while common < min(len(here), len(target)) and here[common] == target[common]:
                common += 1
            if common < len(here) and common < len(target):
                edges[tuple(here[: common + 1])].add(tuple(target[: common + 1]))
    # Tarjan's strongly connected components.
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
        if v not in index:
            visit(v)
    return found, edges


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    failed = False
    for crate in crates(root):
        name = os.path.relpath(crate, root)
        found, edges = cycles(os.path.join(crate, "src"))
        for component in found:
            names = frozenset("::".join(m) for m in component)
            if (name, names) in ACCEPTED:
                continue
            if any(crate_name == name and all(n.startswith(prefix) for n in names)
                   for crate_name, prefix in ACCEPTED_ROOMS):
                continue
            failed = True
            print(f"{name}: modules import each other: {', '.join(sorted(names))}")
            for a in component:
                for b in sorted(edges[a]):
                    if b in component:
                        print(f"    {'::'.join(a)} -> {'::'.join(b)}")
    if failed:
        print("move what the lower module needs below it (see docs/README.md, 'Inside each crate')")
        return 1
    print("import floors: no module imports from one above it")
    return 0


if __name__ == "__main__":
    sys.exit(main())

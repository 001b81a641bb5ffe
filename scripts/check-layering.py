#!/usr/bin/env python3
"""Fails when a crate's modules import each other in a circle.

For every crate of the workspace (each `*/src` and `*/*/src` holding a
lib.rs or main.rs), every source file is one module (`src/a.rs` and
`src/a/mod.rs` are `a`, `src/a/b.rs` is `a::b`, lib.rs/main.rs the crate
root). A module depends on another when its code names it through a path:
`crate::a::...`, `use crate::{a, b::c}`, `super::...`, or, from the file
that declares it, a child module's name (`a::f()` in lib.rs). Comments (doc
comments and their links included), string literals and `#[cfg(test)]`
modules are ignored, and so are `mod a;` declarations and `pub use`
re-exports (they name, they do not use); `crate::Item` re-exported by the
root counts as a use of the module the item comes from. A submodule naming
its own parent (`super::Item` in `a/b.rs`) is not counted: it is part of
that parent; siblings and everything else are.

Usage: check-layering.py [crate directory ...]   (default: every crate)
Exit status 1, with each circle on stderr, when there is one.
"""

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def strip_code(text):
    """The text without comments, string/char literals and test modules."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            i = n if end < 0 else end + 1 + len(hashes)
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.[^']*|[^\\'])'", text[i:]):
            i += re.match(r"'(\\.[^']*|[^\\'])'", text[i:]).end()
            out.append("' '")
        else:
            out.append(c)
            i += 1
    code = "".join(out)
    return remove_test_modules(code)


def remove_test_modules(code):
    """`#[cfg(test)] mod x { ... }` removed (brace-matched)."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", code)
        if not m:
            return code
        depth, i = 1, m.end()
        while i < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        code = code[: m.start()] + code[i:]


def module_of(src, path):
    """The module path (tuple) of a source file."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    if parts in (["lib"], ["main"]):
        parts = []
    return tuple(parts)


def group_items(body):
    """The top-level comma-separated items of a `{...}` use group."""
    items, depth, cur = [], 0, []
    for ch in body:
        if ch == "," and depth == 0:
            items.append("".join(cur).strip())
            cur = []
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur.append(ch)
    items.append("".join(cur).strip())
    return [i for i in items if i]


def expand(prefix, rest):
    """Paths named by `prefix::rest`, where rest may open a `{}` group."""
    rest = rest.strip()
    m = re.match(r"\s*(\w+)\s*::\s*", rest)
    if m and not rest.startswith("{"):
        return expand(prefix + [m.group(1)], rest[m.end():])
    if rest.startswith("{"):
        depth = 0
        for k, ch in enumerate(rest):
            depth += {"{": 1, "}": -1}.get(ch, 0)
            if depth == 0:
                break
        paths = []
        for item in group_items(rest[1:k]):
            paths += expand(prefix, item)
        return paths
    last = re.match(r"\w*", rest).group(0)
    return [prefix + [last]] if last and last != "self" else [prefix]


PATH = re.compile(r"(?<![\w:])((?:crate|super|self)(?:\s*::\s*(?:super|self))*)\s*::\s*")


def crate_graph(src):
    files = sorted(p for p in src.rglob("*.rs"))
    modules = {module_of(src, p): p for p in files}
    codes = {m: strip_code(p.read_text()) for m, p in modules.items()}

    # Items re-exported by a module (`pub use a::b::Item;`), to follow
    # `crate::Item` to where Item lives.
    reexports = {}
    for m, code in codes.items():
        for use in re.finditer(r"\bpub(\([^)]*\))?\s+use\s+([^;]+);", code):
            for path in expand([], use.group(2)):
                absolute = resolve_relative(m, path, modules)
                if absolute and path:
                    reexports[(m, path[-1])] = absolute

    edges = {m: {} for m in modules}
    for m, code in codes.items():
        body = re.sub(r"\bpub(\([^)]*\))?\s+use\s+[^;]+;", "", code)
        body = re.sub(r"\b(pub(\([^)]*\))?\s+)?mod\s+\w+\s*;", "", body)
        named = []
        for use in re.finditer(r"\buse\s+([^;]+);", body):
            named += expand([], use.group(1))
        body_wo_use = re.sub(r"\buse\s+[^;]+;", "", body)
        for hit in PATH.finditer(body_wo_use):
            head = [s.strip() for s in hit.group(1).split("::")]
            named += expand(head, body_wo_use[hit.end():hit.end() + 400])
        # Bare paths to child modules (`child::f`), from the declaring file.
        children = {c[-1] for c in modules if c[:-1] == m and c != m}
        for hit in re.finditer(r"(?<![\w:])(\w+)\s*::", body_wo_use):
            if hit.group(1) in children:
                named.append([hit.group(1)])
        for path in named:
            target = resolve_relative(m, path, modules)
            if target is None:
                continue
            target = follow(target, path, modules, reexports)
            if target != m and not is_ancestor_facade(m, target, path):
                edges[m].setdefault(target, " ".join("::".join(path).split()))
    return edges


def resolve_relative(m, path, modules):
    """The absolute module path `path` names from module `m`, or None."""
    if not path:
        return None
    if path[0] == "crate":
        base, rest = (), path[1:]
    elif path[0] in ("super", "self"):
        base, rest = m, list(path)
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    elif tuple(m) + (path[0],) in modules:
        base, rest = m, path
    else:
        return None
    target = tuple(base)
    for seg in rest:
        if target + (seg,) in modules:
            target = target + (seg,)
        else:
            break
    return target + tuple(rest[len(target) - len(base):])


def follow(target, path, modules, reexports):
    """The module a resolved path lands in (through re-exports)."""
    for k in range(len(target), -1, -1):
        if target[:k] in modules:
            module = target[:k]
            item = target[k] if k < len(target) else None
            if item and (module, item) in reexports:
                again = reexports[(module, item)]
                for j in range(len(again), -1, -1):
                    if again[:j] in modules:
                        return again[:j]
            return module
    return ()


def is_ancestor_facade(m, target, path):
    """A submodule naming its own parent module (not the crate root): in
    Rust the child is part of its parent, whose items it sees; the parent
    and its children are checked as one against the rest, and children
    against each other."""
    return len(target) > 0 and len(target) < len(m) and m[: len(target)] == target


def cycles(edges):
    """The strongly connected components with more than one module."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def one_circle(comp, edges):
    """One concrete circle inside a component, as a list of modules."""
    members = set(comp)
    start = comp[0]
    # Breadth-first from start back to start, inside the component.
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges[v]):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w in members and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def name(module):
    return "::".join(module) or "crate root"


def crate_dirs():
    found = []
    for manifest in sorted(ROOT.glob("*/Cargo.toml")) + sorted(ROOT.glob("*/*/Cargo.toml")):
        src = manifest.parent / "src"
        if (src / "lib.rs").exists() or (src / "main.rs").exists():
            found.append(manifest.parent)
    return found


def main(argv):
    dirs = [Path(a).resolve() for a in argv] or crate_dirs()
    failed = False
    for crate in dirs:
        edges = crate_graph(crate / "src")
        for comp in cycles(edges):
            failed = True
            circle = one_circle(comp, edges)
            steps = " -> ".join(
                f"{name(a)} ({edges[a][b]})" for a, b in zip(circle, circle[1:])
            )
            print(
                f"check-layering: {os.path.relpath(crate, ROOT)}: import circle among "
                f"{', '.join(name(c) for c in comp)}: {steps} -> {name(circle[-1])}",
                file=sys.stderr,
            )
    if not failed:
        print(f"check-layering: no import circle in {len(dirs)} crates")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

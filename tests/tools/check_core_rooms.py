#!/usr/bin/env python3
"""The house rules of core/ (core/README.md), checked from the code's own includes:

- every file sits in a room that core/CMakeLists.txt lists (CORE_ROOMS, lowest first);
- a room includes only itself and rooms listed before it, never a later one;
- no circle between units: a .cpp and its header are one unit, and a unit reaches another when
  one of its files includes a file of the other, directly or through headers that have no .cpp
  of their own (an internal header, a header-only helper), so a call cannot close a loop either.
Prints each breach with the include that makes it; exit 1 if any."""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
cmake = "\n".join(line.split("#")[0] for line in open(os.path.join(root, "core", "CMakeLists.txt")))
rooms = re.search(r"set\(CORE_ROOMS(.*?)\)", cmake, re.S).group(1).split()
rank = {r: i for i, r in enumerate(rooms)}


def room_of(path):  # "core/import/kineto/x.h" -> "import/kineto"; subfolders of a listed room belong to it
    d = os.path.dirname(path)[len("core/"):] if path.count("/") > 1 else "."
    while d not in rank and "/" in d:
        d = d.rsplit("/", 1)[0]
    return d


breaches, includes = [], {}
for folder, _, files in os.walk(os.path.join(root, "core")):
    for f in sorted(files):
        if not f.endswith((".h", ".cpp")):
            continue
        path = os.path.relpath(os.path.join(folder, f), root)
        room = room_of(path)
        if room not in rank:
            breaches.append(f"{path}: its folder is not a room of CORE_ROOMS")
            continue
        includes[path] = []
        for inc in re.findall(r'^#include "(core/[^"]+)"', open(os.path.join(root, path)).read(), re.M):
            target = room_of(inc)
            if target in rank and rank[target] > rank[room]:
                breaches.append(f"{path} includes {inc}: room {room} is below {target}")
            includes[path].append(inc)

stem = lambda path: path.rsplit(".", 1)[0]
has_cpp = {stem(p) for p in includes if p.endswith(".cpp")}


def reached(path, seen):  # the units that `path` reaches, headers without a .cpp passed through
    out = set()
    for inc in includes.get(path, ()):
        if stem(inc) in has_cpp:
            out.add(stem(inc))
        elif inc not in seen:
            seen.add(inc)
            out |= reached(inc, seen)
    return out


units = {}
for path in includes:
    if stem(path) in has_cpp:
        units.setdefault(stem(path), set()).update(reached(path, {path}))


def find_circle():
    state, stack = {}, []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(units.get(u, ())):
            if v == u or v not in units:
                continue
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state:
                found = visit(v)
                if found:
                    return found
        state[u] = 2
        stack.pop()
        return None

    for u in sorted(units):
        if u not in state:
            found = visit(u)
            if found:
                return found
    return None


circle = find_circle()
if circle:
    breaches.append("include circle: " + " -> ".join(circle))
for b in breaches:
    print(b)
print(f"core rooms: {len(units)} units in {len(rooms)} rooms, {len(breaches)} breaches")
sys.exit(1 if breaches else 0)

#!/usr/bin/env python3
"""Checks that each folder of user/ includes only itself and the folders below
it in the data path (docs/design.md), and that no module (NAME.c with
NAME.h) depends on itself through others. Prints one line per violation; exits 1 if there is any."""
import os
import re
import sys

# Lowest first: a folder may include itself and anything before it.
LAYERS = ["base", "sampler", "proc", "symbols", "jvm", "python", "spark", "output", "export", "record", "."]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(rel):
    top = rel.split("/")[0] if "/" in rel else "."
    return LAYERS.index(top) if top in LAYERS else None


def module_cycles(graph):
    deps = {}
    for rel, incs in graph.items():
        mod = os.path.splitext(rel)[0]
        deps.setdefault(mod, set()).update(os.path.splitext(i)[0] for i in incs)
    for mod in deps:
        deps[mod].discard(mod)
    found, state = [], {}

    def visit(mod, path):
        state[mod] = "open"
        for dep in sorted(deps.get(mod, ())):
            if state.get(dep) == "open":
                cycle = path[path.index(dep):] + [dep]
                found.append("include cycle: " + " -> ".join(cycle))
            elif dep not in state:
                visit(dep, path + [dep])
        state[mod] = "done"

    for mod in sorted(deps):
        if mod not in state:
            visit(mod, [mod])
    return found


def flat_cycles(folder):
    """Module cycles among the files of one flat folder (the JVMTI helper)."""
    graph = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith((".c", ".h")):
            with open(os.path.join(folder, name)) as f:
                graph[name] = [i for i in INCLUDE.findall(f.read())
                               if os.path.exists(os.path.join(folder, i))]
    return module_cycles(graph)


def main(root):
    user = os.path.join(root, "user")
    problems, graph = [], {}
    for dirpath, _, files in os.walk(user):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), user)
            mine = layer_of(rel)
            if mine is None:
                problems.append(f"user/{rel}: folder is not a known layer")
                continue
            with open(os.path.join(dirpath, name)) as f:
                includes = INCLUDE.findall(f.read())
            graph[rel] = [i for i in includes if os.path.exists(os.path.join(user, i))]
            for inc in includes:
                if not os.path.exists(os.path.join(user, inc)):
                    continue  # include/ or build/ (skeletons)
                theirs = layer_of(inc)
                if theirs is None or theirs > mine:
                    problems.append(f"user/{rel}: includes {inc}, a layer above it")
    problems += module_cycles(graph)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--cycles-only"]:
        found = flat_cycles(args[1])
        for line in found:
            print(line)
        sys.exit(1 if found else 0)
    sys.exit(main(args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

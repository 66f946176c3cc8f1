#!/usr/bin/env python3
"""The source tree's layering, checked on the built objects and the
sources' includes.

Each folder is a layer; LAYERS says which other layers its code may call.
A symbol an object uses but does not define (nm -u) and that another
object of the build defines is an arrow from the first object's folder to
the second's; so is a quoted #include that resolves to a header of
another folder (the including file's folder first, then the Makefile's
-I order).  An arrow to a layer its folder may not call is a violation.
Symbols of PostgreSQL, the C library and CUDA's runtime are defined by no
object here, and their headers are in no folder here: not arrows.  Exits
1 and lists the violations, or prints the arrows between layers and exits
0.

    python3 test/layering.py [ROOT]     (ROOT: the built tree, default .)
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

# folder -> the folders its objects may call (besides itself)
LAYERS = {
    "src": {"costmodel", "cuda"},
    "costmodel": set(),
    "cuda": set(),
}

# (folder, symbol or header): what a folder may take from a layer it may
# not otherwise call
ALLOWED = set()

# where a quoted #include is looked for after the including file's folder
# (the Makefile's -I order)
INCLUDE_PATH = ["src", "cuda", "costmodel"]


def nm(path, *flags):
    out = subprocess.run(["nm", *flags, path], capture_output=True, text=True, check=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if flags == ("-u",):
            if parts:
                syms.add(parts[-1])
        elif len(parts) == 3 and parts[1] not in ("U", "w", "v"):
            syms.add(parts[2])
    return syms


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    objects = []
    for folder in LAYERS:
        d = os.path.join(root, folder)
        if os.path.isdir(d):
            # the objects of the sources there now (not those of removed ones)
            objects += [os.path.join(folder, f) for f in sorted(os.listdir(d))
                        if f.endswith(".o") and
                        any(os.path.exists(os.path.join(d, f[:-2] + ext)) for ext in (".c", ".cu"))]
    if not any(o.startswith("costmodel/") for o in objects):
        print("layering: no objects under %s/costmodel (build first)" % root)
        return 1
    defined = {}
    for o in objects:
        for s in nm(os.path.join(root, o), "--defined-only", "-g"):
            defined.setdefault(s, o)
    arrows = defaultdict(int)
    violations = []
    for o in objects:
        layer = o.split("/")[0]
        for s in sorted(nm(os.path.join(root, o), "-u")):
            where = defined.get(s)
            if where is None:
                continue
            target = where.split("/")[0]
            if target == layer:
                continue
            arrows[(layer, target)] += 1
            if target not in LAYERS[layer] and (layer, s) not in ALLOWED:
                violations.append("%s uses %s, defined in %s (%s may not call %s)"
                                  % (o, s, where, layer, target))
    for folder in LAYERS:
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if not f.endswith((".c", ".h", ".cu", ".cuh")):
                continue
            with open(os.path.join(d, f), errors="replace") as src:
                text = src.read()
            for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
                where = next((p for p in [folder] + INCLUDE_PATH
                              if os.path.exists(os.path.join(root, p, name))), None)
                if where is None or where == folder:
                    continue
                arrows[(folder, where)] += 1
                if where not in LAYERS[folder] and (folder, name) not in ALLOWED:
                    violations.append("%s/%s includes %s/%s (%s may not call %s)"
                                      % (folder, f, where, name, folder, where))
    for (a, b), n in sorted(arrows.items()):
        print("layering: %s -> %s: %d uses (symbols and includes)" % (a, b, n))
    if violations:
        print("layering: %d violations" % len(violations))
        for v in violations:
            print("  " + v)
        return 1
    print("layering: ok (%d objects)" % len(objects))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Lists the methods of a burn-backend ops trait: required (no body) and provided.

Used to write saturate-vmap's op files and to check the differential harness covers every op.
usage: ops_skeleton.py <trait file> [--required|--provided|--skeleton]
"""
import re
import sys


def methods(path):
    src = open(path).read()
    start = re.search(r"pub trait \w+<B: Backend>[^{]*\{", src).end()
    out = []
    i = start
    depth = 1
    while i < len(src) and depth > 0:
        m = re.compile(r"\n    fn ([a-z_0-9]+)").search(src, i)
        if not m:
            break
        # skip text until this fn while tracking depth is unnecessary: trait items are at 4 spaces
        j = m.start() + 1
        # find end of signature: first ';' or '{' at paren/angle depth 0
        k = m.end()
        par = 0
        while True:
            c = src[k]
            if c in "([":
                par += 1
            elif c in ")]":
                par -= 1
            elif par == 0 and c in ";{":
                break
            k += 1
        sig = src[j:k].strip()
        required = src[k] == ";"
        out.append((m.group(1), sig, required))
        if required:
            i = k + 1
        else:
            # skip the body
            d = 0
            while True:
                c = src[k]
                if c == "{":
                    d += 1
                elif c == "}":
                    d -= 1
                    if d == 0:
                        break
                k += 1
            i = k + 1
        if src.find("\n}", k) < 0:
            break
    return out


if __name__ == "__main__":
    path, mode = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "--skeleton")
    for name, sig, required in methods(path):
        if mode == "--required" and required:
            print(name)
        elif mode == "--provided" and not required:
            print(name)
        elif mode == "--skeleton":
            if required:
                s = re.sub(r"\bB\b", "Self", sig)
                print(f"    {s} {{\n        todo!(\"vmap: {name}\")\n    }}\n")
            else:
                print(f"    // provided: {name}")

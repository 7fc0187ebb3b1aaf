#!/usr/bin/env python3
"""Which kernels of a build compile to the same PTX as in other builds, entry by entry.

    python3 bench/ptx_entries.py new=new.ptx base=base.ptx tested=tested.ptx

The first argument is the candidate, the others references; each is LABEL=FILE (or FILE, labelled by
its name). For each .entry and .func defined in the candidate it prints the labels of the references
whose definition is the same text, byte for byte, or "none", then how many matched each. The
per-file hashes that nvcc puts in the names of anonymous namespaces and internal symbols
(_GLOBAL__N__<hex>, _INTERNAL_<hex>) are set aside, so the same source compiled from two checkouts
matches.

A kernel whose PTX is the same as a measured or tested build's is that build's kernel, so a change
can be shown to touch only the kernels it means to, without a GPU. Make the PTX of a checkout T
(kernels/jacobi_evd_batched.cu here; jacobi_evd_persistent.cu likewise) with the build's options:

    nvcc -I T/kernels/include -I T/lib/include -O3 -DNDEBUG -arch=compute_90 -std=c++17 \\
        --expt-relaxed-constexpr -ptx T/kernels/jacobi_evd_batched.cu -o T.ptx

Names are shown demangled where c++filt is found. Without -lineinfo the PTX holds no line numbers,
so edits to comments leave it unchanged.
"""
import os
import re
import shutil
import subprocess
import sys

HEADER = re.compile(r"^(?:\.(?:visible|weak|extern)\s+)*\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$.]+)")
FILE_HASHES = [(re.compile(r"_GLOBAL__N__[0-9a-f]+_"), "_GLOBAL__N__#_"),
               (re.compile(r"_INTERNAL_[0-9a-f]{8}_"), "_INTERNAL_#_")]


def normalised(text):
    for pattern, replacement in FILE_HASHES:
        text = pattern.sub(replacement, text)
    return text


def definitions(path):
    """{normalised name: (name, normalised text)} of the entries and functions defined in a PTX file."""
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    if not any(line.startswith(".version") for line in lines[:50]):
        raise ValueError("no .version directive in its first 50 lines")
    found = {}
    i = 0
    while i < len(lines):
        match = HEADER.match(lines[i])
        if not match:
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i] != "{" and not lines[i].rstrip().endswith(";"):
            i += 1
        if i == len(lines) or lines[i] != "{":  # a declaration, or a header cut short
            i += 1
            continue
        while i < len(lines) and lines[i] != "}":
            i += 1
        if i == len(lines):
            raise ValueError(f"the body of {match.group(1)} has no closing brace")
        name = match.group(1)
        found[normalised(name)] = (name, normalised("\n".join(lines[start:i + 1])))
        i += 1
    if not found:
        raise ValueError("no .entry or .func defined")
    return found


def demangled(names):
    tool = shutil.which("c++filt")
    if not tool:
        return names
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    return out if len(out) == len(names) else names


def main(arguments):
    if len(arguments) < 2 or arguments[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if arguments and arguments[0] in ("-h", "--help") else 2
    builds = []
    for argument in arguments:
        label, _, path = argument.rpartition("=")
        label = label or os.path.splitext(os.path.basename(path))[0]
        try:
            builds.append((label, definitions(path)))
        except (OSError, ValueError) as error:
            print(f"ptx_entries.py: {path}: not PTX that can be read ({error})", file=sys.stderr)
            return 1
    (_, candidate), references = builds[0], builds[1:]
    keys = sorted(candidate)
    names = demangled([candidate[key][0] for key in keys])
    counts = {label: 0 for label, _ in references}
    counts["none"] = 0
    for key, name in zip(keys, names):
        same = [label for label, entries in references if key in entries and entries[key][1] == candidate[key][1]]
        for label in same or ["none"]:
            counts[label] += 1
        print(f"{','.join(same) or 'none':<16} {name}")
    print(f"{len(keys)} definitions: " + ", ".join(f"{count} as {label}" for label, count in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

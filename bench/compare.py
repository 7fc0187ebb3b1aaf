#!/usr/bin/env python3
"""Side by side: the headline figure of each eigbench case in several reports (eigbench --json).

    python3 bench/compare.py base=run1.json base=run2.json new=run3.json new=run4.json

Each argument is LABEL=FILE (or FILE, labelled by its name). Runs with the same label share a column,
their figures joined in the order given, so that the spread between runs stands beside the change.
Prints a markdown table a case: one row a type and size, one column a label. The figures:

  cold batch, svd cold batch   eigstream's median ms, and its speedup against the best cuSOLVER routine
  warm stream                  million matrices a second back to back, and mean sweeps
  svd warm stream              million matrices a second, and mean sweeps
  latency                      p50 / p99 in us
  submitters                   the rate as a fraction of the batched kernel's
"""
import json
import os
import sys


def figure(case):
    e = case["eigstream"]
    kind = case["case"]
    if kind in ("cold batch", "svd cold batch"):
        return f"{e['ms']:.3g} ms ({case['speedup']:.2f}x)"
    if kind == "warm stream":
        return f"{e['back_to_back_matrices_per_second'] / 1e6:.3g} M/s ({e['mean_sweeps']:.2f})"
    if kind == "svd warm stream":
        return f"{e['matrices_per_second'] / 1e6:.3g} M/s ({e['mean_sweeps']:.2f})"
    if kind == "latency":
        return f"{e['latency']['p50_us']:.1f} / {e['latency']['p99_us']:.1f}"
    if kind == "submitters":
        return f"{case['ratio_to_batched']:.3f}"
    raise ValueError(f"unknown eigbench case '{kind}'")


def size(case):
    return f"{case['m']} x {case['n']}" if "m" in case else str(case["n"])


def main(arguments):
    if not arguments or arguments[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if arguments else 2
    labels, table = [], {}  # table[case][(type, size)][label] = [figures]
    for argument in arguments:
        label, _, path = argument.rpartition("=")
        label = label or os.path.splitext(os.path.basename(path))[0]
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError) as error:
            print(f"compare.py: {path}: not an eigbench report ({error})", file=sys.stderr)
            return 1
        if not isinstance(report, dict) or not isinstance(report.get("cases"), list):
            print(f"compare.py: {path}: not an eigbench report (no list of cases)", file=sys.stderr)
            return 1
        cases = report["cases"]
        if label not in labels:
            labels.append(label)
        for index, case in enumerate(cases):
            try:
                cell = figure(case)
                row = table.setdefault(case["case"], {}).setdefault((case["type"], size(case)), {})
            except (KeyError, TypeError, ValueError) as error:
                print(f"compare.py: {path}: case {index}: not as eigbench writes it ({error!r})", file=sys.stderr)
                return 1
            row.setdefault(label, []).append(cell)
    for kind, rows in table.items():
        present = [label for label in labels if any(label in cells for cells in rows.values())]
        print(f"\n## {kind}\n")
        print("| type | n | " + " | ".join(present) + " |")
        print("| --- | ---: |" + " --- |" * len(present))
        for (type_name, n), cells in rows.items():
            print(f"| {type_name} | {n} | " + " | ".join(", ".join(cells.get(label, ["-"])) for label in present) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

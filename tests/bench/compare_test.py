#!/usr/bin/env python3
"""bench/compare.py on small eigbench reports: the table's cells, and clear errors for a file that is
not a report and for a case without its figures."""
import json
import os
import sys
import tempfile

from script_check import ScriptCheck

check = ScriptCheck(sys.argv[1])
run, expect = check.run, check.expect


def report(warm_rate, sweeps, cold_ms, speedup):
    return {"cases": [
        {"case": "warm stream", "type": "float", "n": 16,
         "eigstream": {"back_to_back_matrices_per_second": warm_rate, "mean_sweeps": sweeps}},
        {"case": "cold batch", "type": "complex float", "n": 32, "eigstream": {"ms": cold_ms}, "speedup": speedup},
        {"case": "latency", "type": "complex float", "n": 32,
         "eigstream": {"latency": {"p50_us": 61.04, "p99_us": 65.66}}},
    ]}


with tempfile.TemporaryDirectory() as work:
    paths = []
    for name, content in [("a1", report(40.88e6, 2.81, 5.27, 1.674)), ("a2", report(40.56e6, 2.81, 5.30, 1.665)),
                          ("b1", report(41.20e6, 2.02, 5.01, 1.761))]:
        paths.append(os.path.join(work, name + ".json"))
        with open(paths[-1], "w") as f:
            json.dump(content, f)
    result = run(f"base={paths[0]}", f"base={paths[1]}", f"new={paths[2]}")
    out = result.stdout
    expect(result.returncode == 0, f"exit status {result.returncode}: {result.stderr}")
    expect("| type | n | base | new |" in out, "header naming the labels in order")
    expect("| float | 16 | 40.9 M/s (2.81), 40.6 M/s (2.81) | 41.2 M/s (2.02) |" in out, "warm row, runs of a label joined")
    expect("| complex float | 32 | 5.27 ms (1.67x), 5.3 ms (1.67x) | 5.01 ms (1.76x) |" in out, "cold row with speedups")
    expect("| complex float | 32 | 61.0 / 65.7, 61.0 / 65.7 | 61.0 / 65.7 |" in out, "latency row")

    result = run(paths[2])  # no label: the file's name
    expect("| type | n | b1 |" in result.stdout, "a file's name as its label")

    not_report = os.path.join(work, "x.json")
    with open(not_report, "w") as f:
        f.write("[1, 2]")
    result = run(not_report)
    expect(result.returncode == 1 and "x.json: not an eigbench report" in result.stderr, "error for a file that is not a report")

    with open(not_report, "w") as f:
        json.dump({"cases": [{"case": "warm stream", "type": "float", "n": 16, "eigstream": {}}]}, f)
    result = run(not_report)
    expect(result.returncode == 1 and "x.json: case 0: not as eigbench writes it" in result.stderr,
           "error naming a case without its figures")

check.finish()

#!/usr/bin/env python3
"""Where a profiled kernel's instructions and stall samples go, by part of its source.

    python3 bench/ncu_source_parts.py SASS.csv CUDA_SASS.csv [--per N] NAME=FILE:FIRST-LAST ...

The two files are a report's source page as CSV, made on the GPU machine from a report of
`ncu --set full --import-source yes ... -o R`:

    ncu -i R.ncu-rep --page source --csv --print-source sass      > SASS.csv
    ncu -i R.ncu-rep --page source --csv --print-source cuda,sass > CUDA_SASS.csv

Only these two views carry metrics (`--print-source cuda` alone prints the source without them).
The first gives each SASS instruction's executions and stall samples, the second the source line
each instruction comes from. A part is the span of SASS addresses whose instructions come from lines
FIRST-LAST of FILE (a file name, without its folders), so the helpers inlined into those lines count
with them: for example the sweeps of the pairs solve, `sweeps=jacobi_evd_pairs.cuh:245-325`. The
instructions outside every part are counted as "other". For each part it prints the instructions
executed (divided by N with --per, for example the matrices of the launch), their share, the share
of the stall samples, the commonest stall reasons and the opcodes executed most.
"""
import collections
import csv
import re
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def number(text):
    try:
        return float(text)
    except ValueError:
        return 0.0


def read_sass(path):
    """[(address, instruction text, metrics by column)] of the SASS view, and its stall columns."""
    rows = list(csv.reader(open(path, newline="")))
    header = next((r for r in rows if r and r[0] == "Address"), None)
    if header is None:
        sys.exit(f"{path}: no 'Address' header: not the SASS view of --page source --csv")
    sass = [(int(r[0], 16), r[1].strip(), dict(zip(header, r))) for r in rows if r and r[0].startswith("0x")]
    stalls = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    return sass, stalls


def read_lines(path):
    """{address: [(file, line)]} from the cuda,sass view: each SASS row follows its source line's row.

    A source line's row may hold unquoted commas of the source text, so its line number is taken from
    the first field only; SASS rows start with two empty fields and then the address."""
    lines = collections.defaultdict(list)
    current_file, current_line = None, None
    for r in csv.reader(open(path, newline="")):
        if not r:
            continue
        if r[0] == "File Path":
            current_file = r[1].replace("\\", "/").split("/")[-1]
        elif r[0].isdigit():
            current_line = int(r[0])
        elif r[0] == "" and len(r) > 2 and r[2].startswith("0x") and current_file is not None:
            lines[int(r[2], 16)].append((current_file, current_line))
    return lines


def parse_part(text):
    m = re.fullmatch(r"([\w.-]+)=([^:]+):(\d+)-(\d+)", text)
    if not m:
        sys.exit(f"part '{text}': expected NAME=FILE:FIRST-LAST, for example sweeps=jacobi_evd_pairs.cuh:245-325")
    return m.group(1), m.group(2), int(m.group(3)), int(m.group(4))


def main(argv):
    if "--help" in argv or "-h" in argv:
        print(__doc__)
        return
    args, per = [], 1.0
    i = 0
    while i < len(argv):
        if argv[i] == "--per":
            if i + 1 >= len(argv) or number(argv[i + 1]) <= 0:
                print("--per needs a positive number", file=sys.stderr)
                sys.exit(2)
            per = number(argv[i + 1])
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) < 3:
        print("usage: ncu_source_parts.py SASS.csv CUDA_SASS.csv [--per N] NAME=FILE:FIRST-LAST ... (--help)", file=sys.stderr)
        sys.exit(2)
    sass, stalls = read_sass(args[0])
    lines = read_lines(args[1])
    spans = []
    for name, file, first, last in map(parse_part, args[2:]):
        addresses = [a for a, _, _ in sass if any(f == file and first <= l <= last for f, l in lines.get(a, []))]
        if not addresses:
            sys.exit(f"part '{name}': no SASS instruction comes from {file}:{first}-{last}")
        spans.append((name, min(addresses), max(addresses)))
    ordered = sorted(spans, key=lambda s: s[1])
    for (n1, _, hi1), (n2, lo2, _) in zip(ordered, ordered[1:]):
        if lo2 <= hi1:
            sys.exit(f"parts '{n1}' and '{n2}' overlap in their SASS addresses; give lines that do not interleave")

    def part_of(address):
        return next((name for name, lo, hi in spans if lo <= address <= hi), "other")

    executed, samples = collections.Counter(), collections.Counter()
    reasons = collections.defaultdict(collections.Counter)
    opcodes = collections.defaultdict(collections.Counter)
    for address, text, m in sass:
        part, count = part_of(address), number(m.get(EXECUTED, "0"))
        executed[part] += count
        samples[part] += number(m.get(SAMPLES, "0"))
        for s in stalls:
            reasons[part][s[len("stall_"):]] += number(m[s])
        words = text.split()
        op = words[1] if words and words[0].startswith("@") and len(words) > 1 else (words[0] if words else "?")
        opcodes[part][op.split(".")[0]] += count
    total_executed, total_samples = sum(executed.values()) or 1.0, sum(samples.values()) or 1.0
    scale = f" / {per:g}" if per != 1.0 else ""
    print(f"instructions executed{scale}: {sum(executed.values()) / per:.0f}; stall samples: {sum(samples.values()):.0f}")
    for part in [name for name, _, _ in spans] + ["other"]:
        r = reasons[part]
        t = sum(r.values()) or 1.0
        print(f"\n{part}: instructions{scale} {executed[part] / per:.0f} ({100 * executed[part] / total_executed:.1f}%), "
              f"stall samples {100 * samples[part] / total_samples:.1f}%")
        print("  stalls: " + ", ".join(f"{k} {100 * v / t:.0f}%" for k, v in r.most_common(6) if v > 0))
        print("  opcodes" + scale + ": " + ", ".join(f"{k} {v / per:.0f}" for k, v in opcodes[part].most_common(12) if v > 0))


if __name__ == "__main__":
    main(sys.argv[1:])

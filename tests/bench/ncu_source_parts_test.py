#!/usr/bin/env python3
"""bench/ncu_source_parts.py on a small source page: instructions and samples summed by part (the
address span of a line range, helpers from other files within it included), stall reasons and
opcodes, --per, and clear errors for a wrong file, an unknown line range and overlapping parts."""
import sys
import tempfile

from script_check import ScriptCheck

check = ScriptCheck(sys.argv[1])
run, expect = check.run, check.expect

STALLS = ["stall_barrier", "stall_wait", "stall_barrier (Not Issued)"]
# address, instruction, executed, samples, barrier stalls, wait stalls; source (file, line)
CODE = [
    (0x100, "LDG.E R2, [R4.64]", 10, 4, 0, 4, ("kernel.cu", 5)),
    (0x110, "BAR.SYNC.DEFER_BLOCKING 0x0", 30, 20, 18, 2, ("solve.cuh", 40)),
    (0x120, "FFMA R1, R2, R3, R1", 60, 6, 0, 6, ("cmath", 1399)),  # inlined into the loop below
    (0x130, "@P0 BRA 0x110", 30, 2, 0, 2, ("solve.cuh", 42)),
    (0x140, "STG.E [R4.64], R1", 10, 8, 0, 8, ("solve.cuh", 60)),
]


def sass_view():
    header = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed"] + STALLS
    rows = ['"Kernel Name","k"', ",".join(f'"{h}"' for h in header)]
    for a, text, executed, samples, barrier, wait, _ in CODE:
        rows.append(",".join(f'"{v}"' for v in [hex(a), text, samples, executed, barrier, wait, 0]))
    return "\n".join(rows) + "\n"


def cuda_sass_view():
    out = []
    for file in ["kernel.cu", "solve.cuh", "cmath"]:
        out += [f'"File Path","/src/{file}"', '"Function Name","k"', '"Line No","Source","Address","Source","# Samples"']
        for line in sorted({l for *_, (f, l) in CODE if f == file}):
            out.append(f'"{line}",asm("mov.b32 %0, %1;" : "=r"(x) : "r"(y)),"-","-","1"')  # quotes the CSV does not escape
            out += [f'"","","{hex(a)}","{text}","1"' for a, text, *_, (f, l) in CODE if f == file and l == line]
    return "\n".join(out) + "\n"


with tempfile.TemporaryDirectory() as d:
    def write(name, text):
        return check.write(d, name, text)

    sass, cuda_sass = write("sass.csv", sass_view()), write("cuda_sass.csv", cuda_sass_view())
    result = run(sass, cuda_sass, "loop=solve.cuh:40-42")
    out = result.stdout
    expect(result.returncode == 0, f"exit status {result.returncode}: {result.stderr}")
    expect(out.startswith("instructions executed: 140; stall samples: 40"), f"totals: {out}")
    # The loop spans 0x110-0x130, the FFMA from cmath included: 120 of 140 instructions, 28 of 40 samples.
    expect("loop: instructions 120 (85.7%), stall samples 70.0%" in out, f"the loop's sums: {out}")
    expect("stalls: barrier 64%, wait 36%" in out, f"the loop's stall reasons: {out}")
    expect("opcodes: FFMA 60, BAR 30, BRA 30" in out, f"the loop's opcodes (a predicate set aside): {out}")
    expect("other: instructions 20 (14.3%), stall samples 30.0%" in out, f"the rest: {out}")

    result = run(sass, cuda_sass, "--per", "10", "loop=solve.cuh:40-42")
    expect("loop: instructions / 10 12 (85.7%)" in result.stdout, f"--per: {result.stdout}")

    result = run(cuda_sass, cuda_sass, "loop=solve.cuh:40-42")
    expect(result.returncode == 1 and "not the SASS view" in result.stderr, f"a wrong first file: {result.stderr}")
    result = run(sass, cuda_sass, "loop=solve.cuh:90-99")
    expect(result.returncode == 1 and "no SASS instruction" in result.stderr, f"unknown lines: {result.stderr}")
    result = run(sass, cuda_sass, "a=solve.cuh:40-42", "b=kernel.cu:5-5", "c=cmath:1399-1399")
    expect(result.returncode == 1 and "overlap" in result.stderr, f"overlapping parts: {result.stderr}")
    result = run(sass, cuda_sass, "loop")
    expect(result.returncode == 1 and "NAME=FILE:FIRST-LAST" in result.stderr, f"a malformed part: {result.stderr}")

    check.expect_help_and_usage_error("--print-source sass", sass)  # too few arguments

check.finish()

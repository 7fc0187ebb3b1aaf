#!/usr/bin/env python3
"""bench/ptx_entries.py on small PTX files: which definitions match which build's (the per-file
hashes of anonymous namespaces set aside), declarations skipped, and a clear error for a file that
is not PTX."""
import sys
import tempfile

from script_check import ScriptCheck

check = ScriptCheck(sys.argv[1])
run, expect = check.run, check.expect


def ptx(file_hash, kernel_a_body, kernel_b_body):
    anonymous = f"_ZN2ns{len('_GLOBAL__N__' + file_hash + '_')}_GLOBAL__N__{file_hash}_"
    return f""".version 8.8
.target sm_90
.address_size 64

.extern .func  (.param .b32 func_retval0) vprintf
(
\t.param .b64 vprintf_param_0
)
;
.global .align 4 .b8 _ZN2ns_INTERNAL_{file_hash}_5tableE[16];

.visible .entry {anonymous}1aEv(
\t.param .u64 a_param_0
)
{{
\t{kernel_a_body}
\tld.global.u32 %r2, [_ZN2ns_INTERNAL_{file_hash}_5tableE];
\tret;
}}

.visible .entry {anonymous}1bEv()
.maxntid 128, 1, 1
{{
\t{kernel_b_body}
\tret;
}}

.func  (.param .b32 func_retval0) _Z6helperi(
\t.param .b32 _Z6helperi_param_0
)
{{
\tret;
}}
"""


with tempfile.TemporaryDirectory() as d:
    def write(name, text):
        return check.write(d, name, text)

    new = write("new.ptx", ptx("1f49d371", "add.s32 %r1, %r1, 1;", "mul.lo.s32 %r3, %r3, 3;"))
    base = write("base.ptx", ptx("4a360278", "add.s32 %r1, %r1, 1;", "mul.lo.s32 %r3, %r3, 2;"))
    other = write("other.ptx", ptx("0c0ffee0", "add.s32 %r1, %r1, 2;", "mul.lo.s32 %r3, %r3, 2;"))

    result = run(f"new={new}", f"base={base}", f"other={other}")
    expect(result.returncode == 0, f"exit status {result.returncode}: {result.stderr}")
    lines = result.stdout.splitlines()
    rows = {line.split()[-1]: line.split()[0] for line in lines[:-1]}
    expect(len(lines) == 4, f"three definitions and a summary: {lines}")
    # Kernel a: the same text as base's but for the file hashes; b: as neither; the helper: as both.
    expect(any(name.endswith("1aEv") or "::a()" in name for name, label in rows.items() if label == "base"),
           f"kernel a matches base: {rows}")
    expect(any((name.endswith("1bEv") or "::b()" in name) and label == "none" for name, label in rows.items()),
           f"kernel b matches neither: {rows}")
    expect(any(("helper" in name) and label == "base,other" for name, label in rows.items()),
           f"the helper matches both: {rows}")
    expect(not any("vprintf" in name for name in rows), f"the declaration is not a definition: {rows}")
    expect(lines[-1] == "3 definitions: 2 as base, 1 as other, 1 as none", f"summary: {lines[-1]}")

    result = run(new, base)  # labelled by file name
    expect(result.returncode == 0 and result.stdout.splitlines()[-1].endswith("2 as base, 1 as none"),
           f"labels from file names: {result.stdout}")

    not_ptx = write("report.json", '{"cases": []}')
    result = run(f"new={new}", f"base={not_ptx}")
    expect(result.returncode == 1 and not_ptx in result.stderr and "not PTX" in result.stderr,
           f"a file that is not PTX: {result.returncode} {result.stderr}")

    cut = write("cut.ptx", ptx("1f49d371", "add.s32 %r1, %r1, 1;", "nop;").rsplit("}", 1)[0])
    result = run(f"new={new}", f"cut={cut}")
    expect(result.returncode == 1 and "closing brace" in result.stderr, f"a truncated file: {result.stderr}")

    check.expect_help_and_usage_error("LABEL=FILE", new)  # a candidate alone

check.finish()

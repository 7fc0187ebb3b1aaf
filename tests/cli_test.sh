#!/usr/bin/env bash
# End-to-end tests of the `eigstream` program: cli_test.sh <path-to-eigstream> <work-dir>.
# Generates small deterministic Matrix Market files with known spectra, runs evd and svd, and checks
# exit codes, the JSON line, the output files and the error messages. Stops at the first failure.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 <path-to-eigstream-binary> <work-dir>" >&2
  exit 2
fi
BIN=$1
WORK=$2
mkdir -p "$WORK"
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
cd "$WORK"

fail() {
  echo "FAIL: $*" >&2
  if [[ -s out ]]; then echo "--- stdout:" >&2; cat out >&2; fi
  if [[ -s err ]]; then echo "--- stderr:" >&2; cat err >&2; fi
  exit 1
}
ok() { echo "ok: $*"; }

# run ARGS...: runs the program with stdout in ./out, stderr in ./err, exit code in $RC.
run() {
  set +e
  "$BIN" "$@" >out 2>err
  RC=$?
  set -e
}
expect_rc() { # expect_rc CODE WHAT
  [[ $RC -eq $1 ]] || fail "$2: exit code $RC, expected $1"
}
expect_stderr() { # expect_stderr REGEX WHAT (case-insensitive extended regex)
  grep -qiE -- "$1" err || fail "$2: stderr does not match /$1/"
}
# expect_json PYTHON-EXPR WHAT: stdout is exactly one JSON object line, and EXPR (over j) is true.
expect_json() {
  python3 - "$1" <<'EOF' || fail "$2: JSON check failed: $1"
import json, sys
lines = open("out").read().splitlines()
if len(lines) != 1:
    sys.exit("stdout has %d lines, expected one JSON line" % len(lines))
j = json.loads(lines[0])
if not isinstance(j, dict):
    sys.exit("not a JSON object")
if not eval(sys.argv[1], {}, {"j": j}):
    sys.exit("false: %s for %s" % (sys.argv[1], lines[0]))
EOF
}
# expect_values FILE "v1 v2 ..." TOL WHAT: FILE has exactly these values, one per line, to TOL.
expect_values() {
  python3 - "$1" "$2" "$3" <<'EOF' || fail "$4: values in $1 differ from $2"
import sys
got = [float(x) for x in open(sys.argv[1]).read().split("\n") if x.strip()]
want = [float(x) for x in sys.argv[2].split()]
tol = float(sys.argv[3])
if len(got) != len(want):
    sys.exit("%d values, expected %d" % (len(got), len(want)))
bad = [(g, w) for g, w in zip(got, want) if abs(g - w) > tol]
if bad:
    sys.exit("got %s expected %s" % (got, want))
EOF
}
# expect_header FILE "field" ROWS COLS WHAT: a general array file of that field and size.
expect_header() {
  local banner size
  banner=$(sed -n 1p "$1")
  size=$(awk '!/^%/ { print; exit }' "$1")
  [[ $banner == "%%MatrixMarket matrix array $2 general" ]] || fail "$5: $1 banner is '$banner'"
  [[ $size == "$3 $4" ]] || fail "$5: $1 size line is '$size', expected '$3 $4'"
  local entries
  entries=$(awk '!/^%/ { n++ } END { print n - 1 }' "$1")
  [[ $entries -eq $(($3 * $4)) ]] || fail "$5: $1 has $entries entries, expected $(($3 * $4))"
}

# ------------------------------------------------------------------------------------------------
# Inputs

# A = Q diag(5, 3, 1, -2, -4) Q with the Householder reflector Q = I - (2/5) * ones: eigenvalues known.
awk 'BEGIN {
  n = 5; split("5 3 1 -2 -4", d, " "); c = 2 / n
  printf "%%%%MatrixMarket matrix array real general\n%% Q diag(5,3,1,-2,-4) Q\n%d %d\n", n, n
  for (j = 1; j <= n; j++) for (i = 1; i <= n; i++) {
    s = 0
    for (k = 1; k <= n; k++) s += ((i == k) - c) * d[k] * ((k == j) - c)
    printf "%.17g\n", s
  }
}' >sym5.mtx

# The same reflector with diag(5, 3, 1, 0.5, 0.25): positive definite, for the one-sided method.
awk 'BEGIN {
  n = 5; split("5 3 1 0.5 0.25", d, " "); c = 2 / n
  printf "%%%%MatrixMarket matrix array real general\n%d %d\n", n, n
  for (j = 1; j <= n; j++) for (i = 1; i <= n; i++) {
    s = 0
    for (k = 1; k <= n; k++) s += ((i == k) - c) * d[k] * ((k == j) - c)
    printf "%.17g\n", s
  }
}' >psd5.mtx

# Hermitian 4 x 4, block diagonal: [[2, 1-i], [1+i, 3]] (eigenvalues 4, 1) and [[0, 2i], [-2i, 0]]
# (eigenvalues 2, -2); lower triangle, column by column.
cat >herm4.mtx <<'EOF'
%%MatrixMarket matrix array complex hermitian
% blocks [[2, 1-i], [1+i, 3]] and [[0, 2i], [-2i, 0]]: eigenvalues 4, 2, 1, -2
4 4
2 0
1 1
0 0
0 0
3 0
0 0
0 0
0 0
0 -2
0 0
EOF

# 4 x 6 with one nonzero per row and column: singular values 7, 5, 2, 0.5.
awk 'BEGIN {
  m = 4; n = 6
  a[1, 4] = 5; a[2, 1] = -7; a[3, 6] = 0.5; a[4, 2] = -2
  printf "%%%%MatrixMarket matrix array real general\n%d %d\n", m, n
  for (j = 1; j <= n; j++) for (i = 1; i <= m; i++) printf "%.17g\n", ((i, j) in a) ? a[i, j] : 0
}' >wide4x6.mtx

# 16 x 16 symmetric from a Park-Miller generator (exact in awk doubles): needs several sweeps.
awk 'BEGIN {
  n = 16; state = 20240611
  printf "%%%%MatrixMarket matrix array real symmetric\n%d %d\n", n, n
  for (j = 1; j <= n; j++) for (i = j; i <= n; i++) {
    state = (state * 16807) % 2147483647
    printf "%.17g\n", state / 2147483647 - 0.5
  }
}' >rand16.mtx

printf '%%%%MatrixMarket matrix array real general\n3 3\n1\n2\n3\n2\n5\n' >truncated.mtx
printf '%%%%MatrixMarket matrix array real general\n2 2\n1\n2\n2x\n4\n' >badtoken.mtx
printf '%%%%MatrixMarket matrix array real general\n3 4\n' >nonsquare.mtx
awk 'BEGIN { for (k = 1; k <= 12; k++) print k }' >>nonsquare.mtx
printf '%%%%MatrixMarket matrix array real symmetric\n3 3\n4\n1\n0\n4\nnan\n4\n' >nan.mtx
printf '%%%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n' >nonsym.mtx
printf '%%%%MatrixMarket matrix array real general\n0 0\n' >empty.mtx

# ------------------------------------------------------------------------------------------------
# Successful runs

run evd --in sym5.mtx --values w5.txt --vectors V5.mtx
expect_rc 0 "evd of a real symmetric 5 x 5"
expect_json 'j["command"] == "evd" and j["backend"] == "cpu" and j["precision"] == "double" and j["complex"] is False and j["n"] == 5 and j["converged"] is True and j["sweeps"] >= 1 and j["residual"] < 1e-13 and j["orthogonality"] < 1e-13 and j["seconds"] >= 0 and "off_norm" in j' \
  "evd of a real symmetric 5 x 5"
expect_values w5.txt "5 3 1 -2 -4" 1e-10 "evd of a real symmetric 5 x 5"
expect_header V5.mtx real 5 5 "evd of a real symmetric 5 x 5"
ok "evd of a real symmetric 5 x 5: exit 0, JSON keys, eigenvalues 5 3 1 -2 -4 to 1e-10, V 5 x 5"

run evd --in sym5.mtx --values w5_asc.txt --sort ascending --ordering cyclic
expect_rc 0 "evd --sort ascending --ordering cyclic"
expect_values w5_asc.txt "-4 -2 1 3 5" 1e-10 "evd --sort ascending"
ok "evd --sort ascending --ordering cyclic: eigenvalues -4 -2 1 3 5"

run evd --in sym5.mtx --values w5_warm.txt --warm-start V5.mtx
expect_rc 0 "evd --warm-start with the exact eigenvectors"
expect_json 'j["converged"] is True and j["sweeps"] <= 2 and j["residual"] < 1e-13' "evd --warm-start"
expect_values w5_warm.txt "5 3 1 -2 -4" 1e-10 "evd --warm-start"
ok "evd --warm-start with the exact eigenvectors: converged in <= 2 sweeps"

run evd --in herm4.mtx --values wh.txt --vectors Vh.mtx
expect_rc 0 "evd of a complex Hermitian 4 x 4"
expect_json 'j["complex"] is True and j["n"] == 4 and j["converged"] is True and j["residual"] < 1e-13 and j["orthogonality"] < 1e-13' \
  "evd of a complex Hermitian 4 x 4"
expect_values wh.txt "4 2 1 -2" 1e-10 "evd of a complex Hermitian 4 x 4"
expect_header Vh.mtx complex 4 4 "evd of a complex Hermitian 4 x 4"
ok "evd of a complex Hermitian 4 x 4: eigenvalues 4 2 1 -2 to 1e-10, complex V 4 x 4"

run svd --in wide4x6.mtx --s s.txt --u U.mtx --v V.mtx
expect_rc 0 "svd of a real 4 x 6"
expect_json 'j["command"] == "svd" and j["m"] == 4 and j["n"] == 6 and j["complex"] is False and j["converged"] is True and j["residual"] < 1e-13 and j["orthogonality"] < 1e-13' \
  "svd of a real 4 x 6"
expect_values s.txt "7 5 2 0.5" 1e-10 "svd of a real 4 x 6"
expect_header U.mtx real 4 4 "svd of a real 4 x 6"
expect_header V.mtx real 6 4 "svd of a real 4 x 6"
ok "svd of a real 4 x 6: singular values 7 5 2 0.5, U 4 x 4, V 6 x 4"

run evd --in sym5.mtx --values w5f.txt --precision float
expect_rc 0 "evd --precision float"
expect_json 'j["precision"] == "float" and j["converged"] is True and j["residual"] < 1e-5' "evd --precision float"
expect_values w5f.txt "5 3 1 -2 -4" 1e-4 "evd --precision float"
ok "evd --precision float: eigenvalues to 1e-4, residual < 1e-5"

run evd --in psd5.mtx --values w5p.txt --method one-sided
expect_rc 0 "evd --method one-sided of a positive definite 5 x 5"
expect_json 'j["converged"] is True and j["residual"] < 1e-13 and j["orthogonality"] < 1e-13' "evd --method one-sided"
expect_values w5p.txt "5 3 1 0.5 0.25" 1e-10 "evd --method one-sided"
ok "evd --method one-sided of a positive definite 5 x 5: eigenvalues 5 3 1 0.5 0.25 to 1e-10"

run evd --in rand16.mtx --method one-sided
expect_rc 2 "evd --method one-sided of an indefinite matrix"
expect_stderr "semi-definite" "evd --method one-sided of an indefinite matrix"
ok "evd --method one-sided of an indefinite matrix: exit 2, needs positive semi-definite"

# ------------------------------------------------------------------------------------------------
# Not converged

run evd --in rand16.mtx --values w16.txt --vectors V16.mtx --max-sweeps 1
expect_rc 3 "evd --max-sweeps 1 of a random 16 x 16"
expect_json 'j["converged"] is False and j["sweeps"] == 1' "evd --max-sweeps 1"
expect_stderr "did not converge within 1 sweep" "evd --max-sweeps 1"
[[ $(grep -c . w16.txt) -eq 16 ]] || fail "evd --max-sweeps 1: w16.txt does not hold 16 values"
expect_header V16.mtx real 16 16 "evd --max-sweeps 1"
ok "evd --max-sweeps 1 of a random 16 x 16: exit 3, converged false, outputs written"

# ------------------------------------------------------------------------------------------------
# All or nothing: an output that cannot be written leaves every output as it was

echo precious >s_kept.txt
run svd --in wide4x6.mtx --s s_kept.txt --u no_such_dir/U.mtx --v V_new.mtx
expect_rc 2 "svd with --u in a missing directory"
expect_stderr "^eigstream: no_such_dir/U\.mtx: cannot open for writing" "svd with --u in a missing directory"
[[ $(cat s_kept.txt) == precious ]] || fail "svd with --u in a missing directory: --s s_kept.txt was replaced"
[[ ! -e V_new.mtx ]] || fail "svd with --u in a missing directory: --v V_new.mtx was created"
run evd --in sym5.mtx --values w_new.txt --vectors no_such_dir/V.mtx
expect_rc 2 "evd with --vectors in a missing directory"
expect_stderr "^eigstream: no_such_dir/V\.mtx: cannot open for writing" "evd with --vectors in a missing directory"
[[ ! -e w_new.txt ]] || fail "evd with --vectors in a missing directory: --values w_new.txt was created"
! ls ./*.tmp-* >/dev/null 2>&1 || fail "a failed write left a temporary behind: $(ls ./*.tmp-*)"
ok "an output that cannot be written: exit 2, names it, no other output created or replaced, no temporary left"

cp sym5.mtx sym5_copy.mtx
run evd --in sym5_copy.mtx --vectors ./sym5_copy.mtx
expect_rc 2 "evd with --vectors naming the input"
expect_stderr "^eigstream: --vectors \./sym5_copy\.mtx is the file --in names" "evd with --vectors naming the input"
cmp -s sym5.mtx sym5_copy.mtx || fail "evd with --vectors naming the input: the input was changed"
run svd --in wide4x6.mtx --u same.mtx --v same.mtx
expect_rc 2 "svd with --u and --v naming one file"
expect_stderr "^eigstream: --v same\.mtx is the file --u names" "svd with --u and --v naming one file"
[[ ! -e same.mtx ]] || fail "svd with --u and --v naming one file: same.mtx was written"
ok "an output naming an input or another output: exit 2, names both flags, nothing written"

# ------------------------------------------------------------------------------------------------
# Bad input and bad usage

run evd --in truncated.mtx
expect_rc 2 "truncated file"
expect_stderr "^eigstream: .*truncated\.mtx.*line 7.*expected 9 entries.*found 5" "truncated file"
ok "truncated file: exit 2, message names the file, line 7, 9 expected and 5 found"

run svd --in badtoken.mtx
expect_rc 2 "non-numeric entry"
expect_stderr "badtoken\.mtx.*line 5.*'2x'.*not a number" "non-numeric entry"
ok "non-numeric entry: exit 2, message names the file, line 5 and the token"

run evd --in nonsquare.mtx
expect_rc 2 "evd of a 3 x 4 matrix"
expect_stderr "nonsquare\.mtx.*square.*3 x 4" "evd of a 3 x 4 matrix"
ok "evd of a 3 x 4 matrix: exit 2, not square"

run svd --in empty.mtx
expect_rc 2 "svd of a 0 x 0 matrix"
expect_stderr "empty\.mtx.*empty" "svd of a 0 x 0 matrix"
ok "svd of a 0 x 0 matrix: exit 2, empty"

run evd --in nan.mtx
expect_rc 2 "NaN entry"
expect_stderr "\(2, 1\) is NaN|\(1, 2\) is NaN" "NaN entry"
ok "NaN entry: exit 2, message says NaN and which entry"

run evd --in nonsym.mtx
expect_rc 2 "non-symmetric real general matrix"
expect_stderr "hermitian|symmetric" "non-symmetric real general matrix"
ok "non-symmetric real general matrix: exit 2, not Hermitian"

run evd --in sym5.mtx --backend cuda
expect_rc 2 "--backend cuda"
expect_stderr "^eigstream: .*cuda" "--backend cuda"
ok "--backend cuda: exit 2, $(head -n 1 err)"

run evd --in does_not_exist.mtx
expect_rc 2 "missing input file"
expect_stderr "does_not_exist\.mtx.*(no such file|cannot open)" "missing input file"
ok "missing input file: exit 2, message names it"

run evd --in sym5.mtx --no-such-option
expect_rc 2 "unknown option"
expect_stderr "no-such-option" "unknown option"
ok "unknown option: exit 2"

run evd --in sym5.mtx --precision half
expect_rc 2 "bad --precision"
ok "bad --precision value: exit 2"

run
expect_rc 2 "no subcommand"
ok "no subcommand: exit 2"

run evd
expect_rc 2 "evd without --in"
expect_stderr "--in" "evd without --in"
ok "evd without --in: exit 2, names --in"

# ------------------------------------------------------------------------------------------------
# Help

run --help
expect_rc 0 "eigstream --help"
grep -q "Exit codes" out && grep -q "evd" out && grep -q "svd" out || fail "eigstream --help lacks commands or exit codes"
ok "eigstream --help: exit 0, lists commands and exit codes"

for cmd in evd svd; do
  run "$cmd" --help
  expect_rc 0 "eigstream $cmd --help"
  for word in --in --precision --backend --max-sweeps "Exit codes" residual orthogonality MatrixMarket; do
    grep -q -- "$word" out || fail "eigstream $cmd --help does not mention $word"
  done
  ok "eigstream $cmd --help: exit 0, describes options, formats, JSON keys and exit codes"
done

echo "all eigstream CLI checks passed"

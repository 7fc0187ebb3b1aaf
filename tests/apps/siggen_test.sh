#!/usr/bin/env bash
# End-to-end tests of `siggen`: siggen_test.sh <path-to-siggen> <work-dir>. Checks determinism per
# seed and independence of --block, raw file sizes, the JSON summary, and that bad flags and
# unwritable paths exit 2 with a message naming the problem and leave no output. Stops at the first failure.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 <path-to-siggen> <work-dir>" >&2
  exit 2
fi
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$2
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"

source "$HERE/app_test_lib.sh"
run() { run_prog "$BIN" "$@"; }

# --help explains the modes, outputs, convention and exit codes.
run --help
expect_rc 0 "--help"
for word in array mixture --sigmf --udp --tcp broadside "Exit codes"; do
  grep -q -- "$word" out || fail "--help does not mention $word"
done
run array --help
expect_rc 0 "array --help"
for word in --elements --spacing --source --correlation --block --seed --rate --seqnum --status clockwise; do
  grep -q -- "$word" out || fail "array --help does not mention $word"
done
ok "help"

ARRAY=(array --elements 5 --spacing 0.5 --source -20:10 --source 35:3 --correlation 0.3 --samples 2001)
run "${ARRAY[@]}" --seed 7 --out a.cf32
expect_rc 0 "array to a file"
expect_json 'j["mode"] == "array" and j["samples"] == 2001 and j["channels"] == 5 and j["bytes"] == 2001*5*8 and j["output"] == "a.cf32" and j["seconds"] >= 0' "array summary"
[[ $(size a.cf32) -eq $((2001 * 5 * 8)) ]] || fail "a.cf32 is $(size a.cf32) bytes, expected $((2001 * 5 * 8))"
for block in 1 7 2001 100000; do
  run "${ARRAY[@]}" --seed 7 --block $block --out b.cf32
  expect_rc 0 "--block $block"
  cmp -s a.cf32 b.cf32 || fail "--block $block changes the output"
done
run "${ARRAY[@]}" --seed 8 --out c.cf32
expect_rc 0 "another seed"
! cmp -s a.cf32 c.cf32 || fail "--seed 8 gives the same output as --seed 7"
ok "array: deterministic per seed, independent of --block, size samples x channels x 8"

run mixture --channels 12 --latent 3 --snr 20 --samples 999 --seed 2 --block 64 --format ci16 --out m.ci16
expect_rc 0 "mixture ci16"
expect_json 'j["mode"] == "mixture" and j["channels"] == 12 and j["format"] == "ci16_le" and j["bytes"] == 999*12*4' "mixture summary"
[[ $(size m.ci16) -eq $((999 * 12 * 4)) ]] || fail "m.ci16 is $(size m.ci16) bytes, expected $((999 * 12 * 4))"
run mixture --channels 12 --latent 3 --snr 20 --samples 999 --seed 2 --block 999 --format ci16 --out m2.ci16
cmp -s m.ci16 m2.ci16 || fail "mixture: --block changes the output"
ok "mixture: ci16 size samples x channels x 4, independent of --block"

run array --elements 4 --source 0:0 --samples 10 --sigmf rec --status
expect_rc 0 "sigmf"
[[ -s rec.sigmf-meta && $(size rec.sigmf-data) -eq $((10 * 4 * 8)) ]] || fail "sigmf files missing or of the wrong size"
expect_json 'j["output"] == "rec.sigmf-data"' "sigmf summary"
expect_stderr "10 / 10 samples" "--status prints a status line"
ok "sigmf files and status line"

# Bad usage: exit 2, a message naming the problem, no output.
check_bad "--bogus" array --bogus --out x.cf32
check_bad "ANGLE:SNR_DB" array --source 10 --out x.cf32
check_bad "within \[-90, 90\]" array --source 100:3 --out x.cf32
check_bad "K < N" array --elements 2 --source 10:0 --source 20:0 --out x.cf32
check_bad "--latent 4 must be < --channels 4" mixture --channels 4 --latent 4 --out x.cf32
check_bad "no output" array --source 1:1
check_bad "excludes" array --out x.cf32 --sigmf y
check_bad "--format" array --format cs8 --out x.cf32
check_bad "correlation" array --correlation 2 --out x.cf32
check_bad "--seqnum applies to --udp only" array --seqnum --out x.cf32
check_bad "HOST:PORT" array --udp localhost --samples 1
check_bad "port must be a number" array --udp 127.0.0.1:70000 --samples 1
check_bad "--samples" array --samples -5 --out x.cf32
check_bad "SNR must be within \[-100, 100\] dB" array --elements 4 --source 10:1000 --out x.cf32
check_bad "--snr .*within \[-100, 100\] dB" mixture --snr -200 --format ci16 --out x.cf32
no_output "bad flags" x.cf32 y.sigmf-meta y.sigmf-data
ok "bad flags exit 2 with a message"

check_bad "nonexistent_dir/x.cf32" array --samples 10 --out nonexistent_dir/x.cf32
check_bad "nonexistent_dir/r" array --samples 10 --sigmf nonexistent_dir/r
mkdir -p readonly && chmod a-w readonly
if [[ ! -w readonly ]]; then  # root writes anywhere
  check_bad "readonly/x.cf32" array --samples 10 --out readonly/x.cf32
  check_bad "readonly/r" array --samples 10 --sigmf readonly/r
  [[ -z $(ls readonly) ]] || fail "files were left in readonly/"
fi
chmod u+w readonly
no_output "unwritable paths" nonexistent_dir/x.cf32
ok "unwritable paths exit 2 and leave nothing"

# SIGINT while writing a file (--out, --sigmf): exit 130, the unfinished output removed.
for output in "--out slow.cf32" "--sigmf slow"; do
  "$BIN" mixture --channels 4 --latent 2 --samples 100000000 --rate 10000 $output >slow.out 2>slow.err &
  PID=$!
  for _ in $(seq 200); do [[ -s slow.cf32.partial || -s slow.partial.sigmf-data ]] && break; sleep 0.1; done
  [[ -s slow.cf32.partial || -s slow.partial.sigmf-data ]] || fail "siggen $output wrote nothing in 20 s"
  kill -INT $PID
  RC=0
  wait $PID || RC=$?
  [[ $RC -eq 130 ]] || fail "siggen $output after SIGINT: exit code $RC, expected 130"
  grep -q "siggen: interrupted: removing the output unless it is complete" slow.err || fail "siggen $output: no message after SIGINT"
  no_output "siggen $output after SIGINT" slow.cf32 slow.sigmf-data slow.sigmf-meta
done
ok "SIGINT removes an unfinished output"

#!/usr/bin/env bash
# End-to-end tests of beamform: beamform_test.sh <siggen> <beamform> <work-dir>. siggen's 8-element
# array with sources at -20 and 35 degrees, 10 dB SNR, blocks of 200 snapshots: RMS DOA error <= 0.5
# degree over 100 blocks with MDL's source count; MVDR's mean beam pattern peaks at the sources; the
# raw-file and UDP paths give the SigMF path's estimates; bad flags exit 2 with a clear message.
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 <siggen> <beamform> <work-dir>" >&2
  exit 2
fi
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
SIGGEN=$(absolute "$1")
BEAMFORM=$(absolute "$2")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$3
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
source "$HERE/app_test_lib.sh"
run() { run_prog "$BEAMFORM" "$@"; }
summary() { tail -n 1 out >summary.json; }  # the last line of stdout
check_summary() { # check_summary PYTHON-EXPRESSION-ON-j WHAT
  python3 - "$1" <<'PY' || fail "$2"
import json, sys
j = json.load(open("summary.json"))
if not eval(sys.argv[1], {}, {"j": j}):
    sys.exit("false: %s for %s" % (sys.argv[1], j))
PY
}
doa_lines() { python3 -c "
import json
for line in open('$1'):
    j = json.loads(line)
    if 'summary' not in j:
        print(j['block'], j['num_sources'], j['doa_deg'])"; }

run --help
expect_rc 0 "--help"
for word in --in --udp --elements --spacing --position --sources --block --lambda --truth --plot doa_deg rms_doa_error_deg "Exit codes"; do
  grep -q -- "$word" out || fail "--help does not mention $word"
done
ok "help"

ARRAY=(array --elements 8 --spacing 0.5 --source -20:10 --source 35:10 --samples 20000 --seed 11)
run_prog "$SIGGEN" "${ARRAY[@]}" --sigmf doa
expect_rc 0 "siggen array --sigmf"

# The issue's target: geometry and ground truth from SigMF, sources by MDL.
run --in doa.sigmf-meta --block 200 --quiet
expect_rc 0 "beamform SigMF"
summary
check_summary "j['blocks'] == 100 and j['scored_blocks'] == 100 and j['truth_deg'] == [-20.0, 35.0] and j['rms_doa_error_deg'] <= 0.5 and j['backend'] == 'cpu'" \
  "RMS DOA error <= 0.5 degree over 100 blocks, MDL finding 2 sources in each"
python3 - <<'PY' || fail "per-block lines: 2 sources, 2 DOAs, 361 MVDR powers peaking at the sources"
import json
lines = [json.loads(l) for l in open("out")][:-1]
assert len(lines) == 100
mean = [0.0] * 361
for j in lines:
    assert j["num_sources"] == 2 and len(j["doa_deg"]) == 2 and j["sweeps"] >= 1, j
    assert len(j["mvdr_power_db"]) == 361
    mean = [m + p / len(lines) for m, p in zip(mean, j["mvdr_power_db"])]
angles = [-90 + 0.5 * g for g in range(361)]
peaks = sorted((mean[g], angles[g]) for g in range(1, 360) if mean[g] > mean[g - 1] and mean[g] >= mean[g + 1])[-2:]
found = sorted(a for _, a in peaks)
assert abs(found[0] + 20) <= 1 and abs(found[1] - 35) <= 1, found
PY
cp out sigmf.out
ok "SigMF: RMS DOA error $(python3 -c "import json; print(round(json.load(open('summary.json'))['rms_doa_error_deg'], 4))") degree, MVDR peaks at the sources"

# --channels with SigMF input is taken when it agrees with the metadata (and refused when not, below).
run --in doa.sigmf-meta --block 200 --channels 8 --quiet
expect_rc 0 "beamform SigMF --channels 8"
cmp -s <(head -n -1 out) <(head -n -1 sigmf.out) || fail "SigMF with --channels 8 gives other blocks than without"
ok "SigMF with --channels as the metadata says"

# A raw file with the geometry and the truth from flags: the same estimates.
run_prog "$SIGGEN" "${ARRAY[@]}" --out doa.cf32
run --in doa.cf32 --channels 8 --elements 8 --spacing 0.5 --truth=-20,35 --quiet
expect_rc 0 "beamform raw file"
doa_lines out >raw.doa
doa_lines sigmf.out >sigmf.doa
cmp -s raw.doa sigmf.doa || fail "the raw-file path's estimates differ from the SigMF path's"
summary
check_summary "j['rms_doa_error_deg'] <= 0.5" "raw file: DOA error"
ok "raw file with --elements and --truth gives the SigMF path's estimates"

# A short last block (3 snapshots for 8 elements: a rank-deficient covariance that MDL refuses) is
# flagged and counted; the stream before it is unaffected.
run_prog "$SIGGEN" array --elements 8 --spacing 0.5 --source -20:10 --source 35:10 --samples 20003 --seed 11 --out short.cf32
run --in short.cf32 --channels 8 --quiet --no-powers --truth=-20,35
expect_rc 0 "beamform with a short last block"
summary
check_summary "j['blocks'] == 101 and j['skipped_blocks'] == 1 and j['scored_blocks'] == 100 and j['malformed_beamform'] == 1" \
  "a short last block is skipped and counted"
ok "a short last block is skipped and counted"

# UDP: siggen streaming over loopback into beamform gives the file path's estimates.
PORT=$(free_udp_port)
"$BEAMFORM" --udp $PORT --seqnum --channels 8 --elements 8 --quiet --no-powers --idle-seconds 10 >udp.out 2>udp.err &
RECEIVER=$!
wait_for_udp_bind $PORT
run_prog "$SIGGEN" "${ARRAY[@]}" --udp 127.0.0.1:$PORT --seqnum --rate 200000  # paced: a loaded machine must not drop datagrams
expect_rc 0 "siggen --udp"
wait $RECEIVER || { cat udp.err >&2; fail "beamform --udp failed"; }
doa_lines udp.out >udp.doa
cmp -s udp.doa sigmf.doa || fail "the UDP path's estimates differ from the file path's"
ok "UDP loopback gives the file path's estimates"

# TCP: beamform listening, siggen connecting, gives the file path's estimates.
PORT=$(free_tcp_port)
"$BEAMFORM" --tcp-listen $PORT --channels 8 --elements 8 --quiet --no-powers --idle-seconds 10 >tcp.out 2>tcp.err &
RECEIVER=$!
wait_for_tcp_listen $PORT
run_prog "$SIGGEN" "${ARRAY[@]}" --tcp 127.0.0.1:$PORT
expect_rc 0 "siggen --tcp"
wait $RECEIVER || { cat tcp.err >&2; fail "beamform --tcp-listen failed"; }
doa_lines tcp.out >tcp.doa
cmp -s tcp.doa sigmf.doa || fail "the TCP path's estimates differ from the file path's"
ok "TCP gives the file path's estimates"

# --plot: a picture through gnuplot when it is installed, else a message and still success.
run --in doa.sigmf-meta --sources 2 --no-powers --plot doa.png --quiet
expect_rc 0 "--plot"
if command -v gnuplot >/dev/null; then
  [[ -s doa.png ]] || fail "--plot wrote no picture although gnuplot is installed"
else
  expect_stderr "gnuplot is not installed" "--plot without gnuplot"
fi
ok "--plot"

# Bad usage: exit 2, a message naming the problem.
check_bad "--sources 8 must be < the 8 elements" --in doa.sigmf-meta --sources 8
check_bad "4 elements but the input 8 channels" --in doa.cf32 --channels 8 --elements 4
check_bad "--position a:b" --in doa.cf32 --channels 8 --position a:b
check_bad "missing.cf32" --in missing.cf32 --channels 8
check_bad "needs --channels" --in doa.cf32
check_bad "--channels 4 but doa\.sigmf-meta says 8 channels" --in doa.sigmf-meta --channels 4
check_bad "--udp localhost:x" --udp localhost:x --channels 8
check_bad "excludes" --in doa.cf32 --channels 8 --elements 8 --position 0:0
check_bad "--position 0.5x:0" --in doa.cf32 --channels 8 --position 0.5x:0
check_bad "--position 1:0zz" --in doa.cf32 --channels 8 --position 1:0zz
SAME_POINT=()
for n in 1 2 3 4 5 6 7 8; do SAME_POINT+=(--position 0.5:0.25); done
check_bad "the element positions \(from --position\) coincide: all 8 elements are at one point, so no direction can be estimated" \
  --in doa.cf32 --channels 8 "${SAME_POINT[@]}"
python3 - <<'PY'
import json, shutil
meta = json.load(open("doa.sigmf-meta"))
geometry = meta["captures"][0]["spatial:element_geometry"]
for element in geometry:
    element["point"] = list(geometry[2]["point"])
json.dump(meta, open("same.sigmf-meta", "w"))
shutil.copy("doa.sigmf-data", "same.sigmf-data")
PY
check_bad "element positions \(from same\.sigmf-meta, captures\[0\]\.spatial:element_geometry\) coincide" --in same.sigmf-meta
check_bad "the array \(from one element per channel, --spacing apart\) has one element, so no direction can be estimated" \
  --in doa.cf32 --channels 1
check_bad "--seqnum applies to --udp only" --in doa.cf32 --channels 8 --seqnum
check_bad "--idle-seconds applies to --udp, --tcp-listen and --tcp-connect, not to a file" --in doa.cf32 --channels 8 --idle-seconds 2
check_bad "--truth: nan is not a finite number" --in doa.cf32 --channels 8 --truth nan,5
check_bad "--grid-step: NaN is not a finite number" --in doa.cf32 --channels 8 --grid-step NaN
check_bad "--idle-seconds" --udp 5999 --channels 8 --idle-seconds 1e300
: >empty.cf32
check_bad "the input holds no samples" --in empty.cf32 --channels 8
PORT=$(free_tcp_port)
check_bad "tcp 127.0.0.1:$PORT: cannot connect: Connection refused" --tcp-connect 127.0.0.1:$PORT --channels 8 --idle-seconds 0.3
cp doa.cf32 doa.cf32.orig
check_bad "--json doa.cf32 is the input" --in doa.cf32 --channels 8 --json doa.cf32
cmp -s doa.cf32 doa.cf32.orig || fail "beamform changed its input when told to write over it"
ok "bad flags exit 2 with a message"

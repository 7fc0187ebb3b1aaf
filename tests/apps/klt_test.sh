#!/usr/bin/env bash
# End-to-end tests of klt_compress and klt_decompress:
#   klt_test.sh <siggen> <klt_compress> <klt_decompress> <work-dir>
# siggen's 16 channels mixing 4 latent signals at 40 dB SNR, compressed with k = 4: ratio >= 3.5 and
# reconstruction SNR >= 35 dB (from the summary, and recomputed here from the files); the container
# round-trips bit-exactly the compressor's own reconstruction; SigMF and UDP inputs; corrupt and
# truncated containers, NaN input and bad flags exit 2 with a clear message and leave nothing behind;
# a gap of lost samples larger than the free space is refused; SIGINT finishes klt_compress's output
# and removes klt_decompress's.
set -euo pipefail

if [[ $# -ne 4 ]]; then
  echo "usage: $0 <siggen> <klt_compress> <klt_decompress> <work-dir>" >&2
  exit 2
fi
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
SIGGEN=$(absolute "$1")
COMPRESS=$(absolute "$2")
DECOMPRESS=$(absolute "$3")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$4
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
source "$HERE/app_test_lib.sh"

# snr_db ORIGINAL RESTORED: 10 log10(sum |x|^2 / sum |x - y|^2) over two cf32 files, computed here.
snr_db() {
  python3 - "$1" "$2" <<'PY'
import array, math, sys
x, y = array.array("f"), array.array("f")
x.frombytes(open(sys.argv[1], "rb").read())
y.frombytes(open(sys.argv[2], "rb").read())
assert len(x) == len(y), "sizes differ: %d and %d floats" % (len(x), len(y))
signal = sum(v * v for v in x)
error = sum((a - b) * (a - b) for a, b in zip(x, y))
print("%.4f" % (10 * math.log10(signal / error)))
PY
}

run_prog "$COMPRESS" --help
expect_rc 0 "klt_compress --help"
for word in --in --udp --tcp-listen --components --energy --threshold --coefficients --backend --plot compression_ratio "Exit codes"; do
  grep -q -- "$word" out || fail "klt_compress --help does not mention $word"
done
run_prog "$DECOMPRESS" --help
expect_rc 0 "klt_decompress --help"
for word in --in --out --sigmf "Exit codes"; do grep -q -- "$word" out || fail "klt_decompress --help does not mention $word"; done
ok "help"

SAMPLES=60000
run_prog "$SIGGEN" mixture --channels 16 --latent 4 --snr 40 --samples $SAMPLES --seed 5 --out mix.cf32
expect_rc 0 "siggen mixture"

# The issue's target, for both coefficient formats.
for coefficients in float32 int16; do
  run_prog "$COMPRESS" --in mix.cf32 --channels 16 --components 4 --coefficients $coefficients --out $coefficients.klt \
    --reconstructed $coefficients.rec --quiet
  expect_rc 0 "klt_compress --coefficients $coefficients"
  expect_json "j['components'] == 4 and j['compression_ratio'] >= 3.5 and j['snr_db'] >= 35 and j['samples'] == $SAMPLES and j['input_bytes'] == $SAMPLES*16*8 and j['output_bytes'] == $(size $coefficients.klt) and j['backend'] == 'cpu' and j['samples_per_second'] > 0" \
    "$coefficients: ratio >= 3.5 at >= 35 dB"
  cp out $coefficients.summary
  run_prog "$DECOMPRESS" --in $coefficients.klt --out $coefficients.cf32
  expect_rc 0 "klt_decompress $coefficients"
  expect_json "j['samples'] == $SAMPLES and j['gap_samples'] == 0 and j['channels'] == 16" "klt_decompress summary"
  cmp -s $coefficients.rec $coefficients.cf32 || fail "$coefficients: the decompressed samples differ from the compressor's reconstruction"
  measured=$(snr_db mix.cf32 $coefficients.cf32)
  python3 -c "
import json, sys
reported = json.load(open('$coefficients.summary'))['snr_db']
sys.exit(0 if $measured >= 35 and abs($measured - reported) < 0.01 else 1)" ||
    fail "$coefficients: SNR recomputed from the files is $measured dB (summary: $(cat $coefficients.summary))"
  ok "$coefficients: ratio and SNR targets met (SNR $measured dB recomputed from the files), bit-exact round trip"
done

run_prog "$COMPRESS" --in mix.cf32 --channels 16 --energy 0.999 --out energy.klt --quiet
expect_rc 0 "--energy"
expect_json "j['components'] == 4 and j['components_min'] == 4 and j['basis_updates'] >= 1 and j['basis_updates'] <= j['blocks']" \
  "--energy 0.999 keeps the 4 latent signals"
ok "energy rule"

# SigMF in (channels and rate from the metadata), SigMF out.
run_prog "$SIGGEN" mixture --channels 16 --latent 4 --snr 40 --samples 5000 --seed 6 --format ci16 --sigmf rec
expect_rc 0 "siggen --sigmf"
run_prog "$COMPRESS" --in rec.sigmf-meta --components 4 --out rec.klt --quiet
expect_rc 0 "klt_compress SigMF"
expect_json "j['samples'] == 5000 and j['input_bytes'] == 5000*16*4 and j['snr_db'] >= 35" "SigMF summary (ci16: 4 bytes a value pair)"
run_prog "$DECOMPRESS" --in rec.klt --sigmf restored
expect_rc 0 "klt_decompress --sigmf"
[[ -s restored.sigmf-meta && $(size restored.sigmf-data) -eq $((5000 * 16 * 8)) ]] || fail "SigMF output missing or of the wrong size"
grep -q '"core:num_channels": *16' restored.sigmf-meta || fail "restored.sigmf-meta does not say 16 channels"
ok "SigMF in and out"

# UDP in: the same samples as from the file give the same container.
PORT=$(free_udp_port)
run_prog "$SIGGEN" mixture --channels 16 --latent 4 --snr 40 --samples 20000 --seed 7 --out small.cf32
"$COMPRESS" --udp $PORT --channels 16 --components 4 --out udp.klt --quiet --idle-seconds 10 >udp.out 2>udp.err &
COMPRESSOR=$!
wait_for_udp_bind $PORT
run_prog "$SIGGEN" mixture --channels 16 --latent 4 --snr 40 --samples 20000 --seed 7 --udp 127.0.0.1:$PORT --rate 200000  # paced: a loaded machine must not drop datagrams
expect_rc 0 "siggen --udp"
wait $COMPRESSOR || { cat udp.err >&2; fail "klt_compress --udp failed"; }
run_prog "$COMPRESS" --in small.cf32 --channels 16 --components 4 --out file.klt --quiet
expect_rc 0 "klt_compress small file"
cmp -s udp.klt file.klt || fail "the container from UDP differs from the one from the file ($(cat udp.out))"
ok "UDP input gives the container of the file input"

# UDP datagrams with sequence numbers, one missing, one sent twice and, later, one far ahead (a sender
# that jumped its numbering, beyond the reader's 65536-datagram gap bound): the summary counts the
# missing one's samples lost, the repeat a late datagram and the jump a resync, and the decompressed
# stream holds the lost samples as zeros where they were (and none for the repeat or the jump).
PORT=$(free_udp_port)
"$COMPRESS" --udp $PORT --seqnum --channels 16 --components 4 --out gap.klt --quiet --idle-seconds 10 >gap.out 2>gap.err &
COMPRESSOR=$!
wait_for_udp_bind $PORT
python3 - $PORT <<'PY'
import socket, struct, sys, time
data = open("small.cf32", "rb").read()
per = 11 * 16 * 8  # 11 samples a datagram
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for seq in range(1, len(data) // per + 1):
    if seq != 7:  # lost on the way
        number = seq if seq < 100 else seq + (1 << 20)  # the sender jumps ahead at datagram 100
        for _ in range(2 if seq == 50 else 1):  # datagram 50 twice
            s.sendto(struct.pack("<Q", number) + data[(seq - 1) * per:seq * per], ("127.0.0.1", int(sys.argv[1])))
            time.sleep(0.0002)
for _ in range(3):
    s.sendto(b"", ("127.0.0.1", int(sys.argv[1])))
PY
wait $COMPRESSOR || { cat gap.err >&2; fail "klt_compress --udp --seqnum failed"; }
cp gap.out out
expect_json "j['lost_samples'] == 11 and j['late_datagrams'] == 1 and j['resyncs'] == 1 and j['samples'] == 20000 // 11 * 11 - 11" \
  "a lost datagram's samples counted, the repeat as a late datagram, and the jump ahead as a resync"
run_prog "$DECOMPRESS" --in gap.klt --out gap.cf32
expect_rc 0 "klt_decompress of a stream with a gap"
expect_json "j['gap_samples'] == 11 and j['samples'] == 20000 // 11 * 11" "the gap restored as zeros (counted in samples)"
python3 -c "
import array, sys
y = array.array('f'); y.frombytes(open('gap.cf32', 'rb').read())
sys.exit(0 if len(y) == 20000 // 11 * 11 * 32 and not any(y[66 * 32:77 * 32]) and any(y[77 * 32:78 * 32]) else 1)" ||
  fail "the lost samples are not zeros at samples 66 to 76 of the restored stream"
ok "a lost UDP datagram and a jump ahead: counted in the summary, zeros in the lost one's place"

# SIGINT on a live stream that would never end (--idle-seconds 0): the container is finished, not lost.
PORT=$(free_tcp_port)
"$COMPRESS" --tcp-listen $PORT --channels 16 --components 4 --out live.klt --idle-seconds 0 --quiet >live.out 2>live.err &
COMPRESSOR=$!
wait_for_tcp_listen $PORT
python3 - $PORT <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(open("small.cf32", "rb").read())
time.sleep(30)  # connected, silent
PY
PEER=$!
sleep 3
kill -INT $COMPRESSOR
RC=0
wait $COMPRESSOR || RC=$?
kill $PEER 2>/dev/null || true
[[ $RC -eq 0 ]] || { cat live.err >&2; fail "klt_compress after SIGINT: exit code $RC"; }
grep -q "interrupted: finishing the output" live.err || fail "klt_compress did not say it was interrupted"
cp live.out out
expect_json "j['interrupted'] and j['samples'] == 20000" "the summary after SIGINT"
run_prog "$DECOMPRESS" --in live.klt --out live.cf32
expect_rc 0 "klt_decompress of the interrupted stream's container"
expect_json "j['samples'] == 20000" "the interrupted stream's container holds every sample received"
ok "SIGINT ends a live stream with a complete container"

# Corrupt, truncated and foreign containers: exit 2, a message naming the byte, no output.
run() { run_prog "$DECOMPRESS" "$@"; }
cp int16.klt corrupt.klt
printf '\xff' | dd of=corrupt.klt bs=1 seek=5000 conv=notrunc status=none
check_bad "byte [0-9]+: CRC mismatch" --in corrupt.klt --out c.cf32
head -c 100000 int16.klt >truncated.klt
check_bad "truncated" --in truncated.klt --out t.cf32
check_bad "bad magic" --in mix.cf32 --out m.cf32
python3 -c '
import struct, zlib
header = b"EIGKLT\r\n" + struct.pack("<IIdI", 1, 65537, 0.0, 1)
open("wide.klt", "wb").write(header + struct.pack("<I", zlib.crc32(header)))'
check_bad "KLT container wide\.klt, byte 12: 65537 channels" --in wide.klt --out w.cf32
check_bad "cannot open" --in missing.klt --out m.cf32
check_bad "--out|--sigmf" --in int16.klt
no_output "bad containers" c.cf32 t.cf32 m.cf32 w.cf32
ok "corrupt, truncated and foreign containers are refused"

# Valid containers of one block, starting at sample 1000 and at 2^50: the first restores its gap as
# zeros; the second's would fill any disk, so klt_decompress refuses it before writing any.
python3 - <<'PY'
import struct, zlib
channels = 2
header = b"EIGKLT\r\n" + struct.pack("<IIdI", 1, channels, 0.0, 0)
def record(tag, payload):
    head = tag + struct.pack("<I", len(payload))
    return head + payload + struct.pack("<I", zlib.crc32(head + payload))
basis = struct.pack("<I", 1) + struct.pack("<4f", 1, 0, 0, 0)
for name, first_sample in (("near.klt", 1000), ("far.klt", 1 << 50)):
    block = struct.pack("<QII", first_sample, 1, 1) + struct.pack("<2f", 0.5, 0)
    open(name, "wb").write(header + struct.pack("<I", zlib.crc32(header)) + record(b"BASE", basis) +
                           record(b"COEF", block) + record(b"END.", struct.pack("<3Q", 1, 1, 1)))
PY
run_prog "$DECOMPRESS" --in near.klt --out near.cf32
expect_rc 0 "klt_decompress of a block after a gap of 1000 samples"
expect_json "j['gap_samples'] == 1000 and j['samples'] == 1001" "a gap of 1000 samples"
[[ $(size near.cf32) -eq $((1001 * 16)) ]] || fail "near.cf32 holds $(size near.cf32) bytes, expected 1001 x 16"
check_bad "block 0 starts at sample 1125899906842624 after a gap of 1125899906842624 lost samples: restoring them as zeros needs 1125899906842624 x 16 bytes, and .* has [0-9]+ bytes free" --in far.klt --out far.cf32
no_output "a gap no disk holds" far.cf32

# SIGINT while klt_decompress waits for the rest of its input (a pipe that a writer keeps open after
# the first 50000 bytes): exit 130, the unfinished output removed.
mkfifo slow.klt
python3 -c '
import sys, time
with open("slow.klt", "wb") as pipe:
    pipe.write(open("int16.klt", "rb").read(50000))
    pipe.flush()
    time.sleep(30)' &
WRITER=$!
"$DECOMPRESS" --in slow.klt --out slow.cf32 >slow.out 2>slow.err &
PID=$!
for _ in $(seq 100); do [[ -s slow.cf32.partial ]] && break; sleep 0.1; done
[[ -s slow.cf32.partial ]] || fail "klt_decompress wrote nothing of the first 50000 bytes of its input"
kill -INT $PID
RC=0
wait $PID || RC=$?
kill $WRITER 2>/dev/null || true
[[ $RC -eq 130 ]] || fail "klt_decompress after SIGINT: exit code $RC, expected 130"
grep -q "klt_decompress: interrupted: removing the output unless it is complete" slow.err || fail "klt_decompress: no message after SIGINT"
no_output "klt_decompress after SIGINT" slow.cf32
ok "a gap larger than the free space is refused; SIGINT removes an unfinished output"

# Bad input and flags for the compressor: exit 2, a message, no container.
run() { run_prog "$COMPRESS" "$@"; }
python3 -c '
import array
a = array.array("f", [0.5] * (3000 * 4 * 2))
a[2500 * 4 * 2 + 3] = float("nan")
open("nan.cf32", "wb").write(a.tobytes())'
check_bad "block 2 \(samples 2048 to 3000\) holds NaN" --in nan.cf32 --channels 4 --block 1024 --out nan.klt --quiet
check_bad "needs --channels" --in mix.cf32 --out x.klt
check_bad "--channels 8 but rec\.sigmf-meta says 16 channels" --in rec.sigmf-meta --channels 8 --out x.klt
check_bad "--format cf32 but rec\.sigmf-meta says ci16_le \(core:datatype\)" --in rec.sigmf-meta --format cf32 --out x.klt
check_bad "--sample-rate 2000 but rec\.sigmf-meta says 1000000 Hz \(core:sample_rate\)" --in rec.sigmf-meta --sample-rate 2000 --out x.klt
run_prog "$COMPRESS" --in rec.sigmf-meta --channels 16 --format ci16 --sample-rate 1e6 --components 4 --out agree.klt --quiet
expect_rc 0 "klt_compress of a SigMF recording with --channels, --format and --sample-rate that agree with it"
python3 -c '
import json, shutil
meta = json.load(open("rec.sigmf-meta"))
del meta["global"]["core:sample_rate"]
json.dump(meta, open("norate.sigmf-meta", "w"))
shutil.copy("rec.sigmf-data", "norate.sigmf-data")'
run_prog "$COMPRESS" --in norate.sigmf-meta --sample-rate 48000 --components 4 --out norate.klt --quiet
expect_rc 0 "klt_compress of a SigMF recording without a rate, with --sample-rate"
run_prog "$DECOMPRESS" --in norate.klt --sigmf norate_restored
grep -q '"core:sample_rate": *48000' norate_restored.sigmf-meta || fail "--sample-rate did not give the rate the recording lacked"
check_bad "--components 20 but the input has 16 channels" --in mix.cf32 --channels 16 --components 20 --out x.klt
check_bad "excludes" --in mix.cf32 --channels 16 --components 4 --energy 0.9 --out x.klt
check_bad "--lambda" --in mix.cf32 --channels 16 --lambda 1 --out x.klt
check_bad "missing.cf32" --in missing.cf32 --channels 16 --out x.klt
check_bad "--out is required" --in mix.cf32 --channels 16
check_bad "nonexistent_dir/x.klt" --in mix.cf32 --channels 16 --out nonexistent_dir/x.klt
no_output "bad input" nan.klt x.klt
ok "bad input and flags exit 2 and leave nothing"

# A failed run leaves an existing file named by --reconstructed alone, and no output may be the input.
echo precious >keep.dat
check_bad "missing.cf32" --in missing.cf32 --channels 16 --out x.klt --reconstructed keep.dat
check_bad "block 2 \(samples 2048 to 3000\) holds NaN" --in nan.cf32 --channels 4 --block 1024 --out nan.klt --reconstructed keep.dat --quiet
[[ $(cat keep.dat) == precious ]] || fail "a failed klt_compress changed the file named by --reconstructed"
no_output "failed --reconstructed" keep.dat.partial x.klt nan.klt
cp small.cf32 same.cf32
check_bad "--reconstructed same.cf32 is the input" --in same.cf32 --channels 16 --out y.klt --reconstructed same.cf32
check_bad "--out ./same.cf32 is the input" --in same.cf32 --channels 16 --out ./same.cf32
check_bad "--json same.cf32 is the input" --in same.cf32 --channels 16 --out y.klt --json same.cf32
cmp -s same.cf32 small.cf32 || fail "klt_compress changed its input when told to write over it"
no_output "outputs named as the input" y.klt
ok "a failed run keeps the file --reconstructed names; outputs over the input are refused"

# --plot: a picture through gnuplot when it is installed, else a message and still success.
run_prog "$COMPRESS" --in small.cf32 --channels 16 --components 4 --out plot.klt --plot plot.png --quiet
expect_rc 0 "--plot"
if command -v gnuplot >/dev/null; then
  [[ -s plot.png ]] || fail "--plot wrote no picture although gnuplot is installed"
  expect_json "j['plot'] == 'plot.png'" "--plot summary"
else
  expect_stderr "gnuplot is not installed" "--plot without gnuplot"
  [[ ! -e plot.png ]] || fail "--plot without gnuplot left a file"
  expect_json "j['plot'].startswith('none: gnuplot is not installed')" "--plot summary without gnuplot"
fi
ok "--plot"

# Shell helpers of the apps' end-to-end tests (sourced): run a program with its stdout and stderr
# captured in ./out and ./err, and check its exit code, messages, JSON summary line and leftovers.
# Each check stops the test at the first failure, printing what the program said.

fail() {
  echo "FAIL: $*" >&2
  if [[ -s out ]]; then echo "--- stdout:" >&2; cat out >&2; fi
  if [[ -s err ]]; then echo "--- stderr:" >&2; cat err >&2; fi
  exit 1
}
ok() { echo "ok: $*"; }
run_prog() { # run_prog PROGRAM ARGS...: stdout in ./out, stderr in ./err, exit code in RC
  local prog=$1
  shift
  set +e
  "$prog" "$@" >out 2>err
  RC=$?
  set -e
}
expect_rc() { [[ $RC -eq $1 ]] || fail "$2: exit code $RC, expected $1"; }
expect_stderr() { grep -qiE -- "$1" err || fail "$2: stderr does not match /$1/"; }
expect_json() {
  python3 - "$1" <<'PY' || fail "$2: JSON check failed: $1"
import json, sys
lines = open("out").read().splitlines()
if len(lines) != 1:
    sys.exit("stdout has %d lines, expected one JSON line" % len(lines))
j = json.loads(lines[0])
if not eval(sys.argv[1], {}, {"j": j}):
    sys.exit("false: %s for %s" % (sys.argv[1], lines[0]))
PY
}
size() { stat -c %s "$1"; }
no_output() { # no_output WHAT FILES...: none of the files (nor a .partial) exists
  local what=$1
  shift
  for f in "$@"; do
    [[ ! -e $f && ! -e $f.partial ]] || fail "$what: $f or $f.partial was left behind"
  done
  ! ls ./*.partial* >/dev/null 2>&1 || fail "$what: a .partial file was left behind"
}
check_bad() { # check_bad REGEX ARGS...: `run ARGS` (the test defines run) exits 2, says REGEX, prints nothing
  local regex=$1
  shift
  run "$@"
  expect_rc 2 "$*"
  expect_stderr "$regex" "$*"
  [[ ! -s out ]] || fail "$*: printed a summary on failure"
}
free_udp_port() { # prints a UDP port of 127.0.0.1 that nothing is bound to
  python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
free_tcp_port() { # prints a TCP port of 127.0.0.1 that nothing listens on
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_for_udp_bind() { # wait_for_udp_bind PORT: until a receiver has bound it (at most 20 s), seen in /proc/net/udp
  python3 - "$1" <<'PY' || fail "nothing bound UDP port $1 within 20 s"
import sys, time
port = ":%04X" % int(sys.argv[1])
for _ in range(400):
    with open("/proc/net/udp") as table:
        if any(line.split()[1].endswith(port) for line in list(table)[1:]):
            sys.exit(0)
    time.sleep(0.05)
sys.exit(1)
PY
}
wait_for_tcp_listen() { # wait_for_tcp_listen PORT: until something listens on it (at most 20 s), seen in /proc/net/tcp
  python3 - "$1" <<'PY' || fail "nothing listened on TCP port $1 within 20 s"
import sys, time
port = ":%04X" % int(sys.argv[1])
for _ in range(400):
    with open("/proc/net/tcp") as table:
        if any(f[1].endswith(port) and f[3] == "0A" for f in (line.split() for line in list(table)[1:])):
            sys.exit(0)
    time.sleep(0.05)
sys.exit(1)
PY
}

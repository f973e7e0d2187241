#!/usr/bin/env bash
# The resident memory a sync-server process spends on large pushes of one
# SHAPE (-s, default int-array):
#   int-array:  one record whose field is an array of ELEMENTS small
#               integers ({"array": [1,1,…]}), the JSON densest in values;
#   string:     one record whose field is one string of 2 x ELEMENTS bytes;
#   fields:     ELEMENTS / 3000 records of 256 fields each, every field a
#               short string;
#   mutations:  ELEMENTS / 3000 records (at most 1,000: a push's limit),
#               each a title, a number and an array of 2,500 integers;
#   nested:     one record whose field is an array of ELEMENTS / 100 arrays
#               of 100 integers each.
# Each shape makes a body of about 2 x ELEMENTS bytes.
#
#   tools/measure-push-memory.sh [-s SHAPE] [-e ELEMENTS] [-n SEQUENTIAL] [-c CONCURRENT] [SERVER_BINARY]
#
# SERVER_BINARY defaults to .build/release/sync-server (swift build -c release
# --product sync-server). Two runs, each on a fresh server with a SQLite
# database in a temporary directory:
#   sequential: one push after another (default 8); after each, the RSS
#     (VmRSS) and its growth over the server's RSS before the first, and
#     after the last the peak (VmHWM) over that same start;
#   concurrent: CONCURRENT pushes at once (default 16), each from its own
#     user; the peak and the RSS once all are answered.
# Every push must be answered 200. Defaults: ELEMENTS 3000000 (a 6 MB body).
set -euo pipefail
shape=int-array
elements=3000000
sequential=8
concurrent=16
while getopts "s:e:n:c:" option; do
  case $option in
    s) shape=$OPTARG ;;
    e) elements=$OPTARG ;;
    n) sequential=$OPTARG ;;
    c) concurrent=$OPTARG ;;
    *) echo "usage: $0 [-s SHAPE] [-e ELEMENTS] [-n SEQUENTIAL] [-c CONCURRENT] [SERVER_BINARY]" >&2; exit 64 ;;
  esac
done
shift $((OPTIND - 1))
here=$(cd "$(dirname "$0")/.." && pwd)
server=${1:-$here/.build/release/sync-server}
[ -x "$server" ] || { echo "$server is missing: swift build -c release --product sync-server" >&2; exit 66; }
work=$(mktemp -d "${TMPDIR:-/tmp}/syncjournal-push-memory.XXXXXX")
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# One body per push: the same values, its own operations and record ids.
count=$((sequential > concurrent ? sequential : concurrent))
python3 - "$work" "$elements" "$count" "$shape" <<'EOF'
import sys, uuid
work, elements, count, shape = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

def mutation(record, fields):
    return ('{"operationId":"%s","kind":"blob","op":"create","recordId":"%s",'
            '"baseUpdatedAt":null,"fields":{%s}}') % (uuid.uuid4(), record, fields)

def body(i):
    if shape == "int-array":
        return [mutation("r%d" % i, '"values":{"array":[%s]}' % ",".join(["1"] * elements))]
    if shape == "string":
        return [mutation("r%d" % i, '"text":"%s"' % ("x" * (2 * elements)))]
    if shape == "fields":
        fields = ",".join('"field%03d":"value%03d"' % (f, f) for f in range(256))
        return [mutation("r%d-%d" % (i, m), fields) for m in range(max(1, elements // 3000))]
    if shape == "mutations":
        fields = '"n":1,"title":"a small title","values":{"array":[%s]}' % ",".join(["1"] * 2500)
        return [mutation("r%d-%d" % (i, m), fields) for m in range(min(1000, max(1, elements // 3000)))]
    if shape == "nested":
        inner = '{"array":[%s]}' % ",".join(["1"] * 100)
        return [mutation("r%d" % i, '"rows":{"array":[%s]}' % ",".join([inner] * max(1, elements // 100)))]
    sys.exit("unknown shape %s: int-array, string, fields, mutations or nested" % shape)

for i in range(count):
    with open("%s/body%d.json" % (work, i), "w") as f:
        f.write('{"mutations":[%s]}' % ",".join(body(i)))
EOF
body_bytes=$(stat -c %s "$work/body0.json")

users=()
for i in $(seq 0 $((concurrent - 1))); do users+=(--user "tok$i:user$i"); done

kib() { awk -v name="$2:" '$1 == name { print $2 }' "/proc/$1/status"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

start_server() {
  local log=$work/server-$1.log
  "$server" --port 0 --db "$work/db-$1.sqlite" "${users[@]}" >"$log" 2>&1 &
  pid=$!
  local tries=0
  until grep -qs "listening on" "$log"; do
    tries=$((tries + 1))
    [ $tries -lt 300 ] || { echo "sync-server did not start:" >&2; cat "$log" >&2; exit 69; }
    sleep 0.1
  done
  port=$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\).*|\1|p' "$log" | head -1)
  # One small push first, so the database, the statements and the threads
  # exist before the baseline.
  push '{"mutations":[{"operationId":"00000000-0000-4000-8000-000000000000","kind":"blob","op":"create","recordId":"warm","baseUpdatedAt":null,"fields":{}}]}' tok0 >/dev/null
}

stop_server() {
  kill "$pid"
  wait "$pid" || true
  pid=
}

push() {   # BODY-OR-@FILE TOKEN: prints the status code
  curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $2" -H 'Content-Type: application/json' \
    --data-binary "$1" "http://127.0.0.1:$port/v1/sync/push"
}

expect_ok() {
  [ "$1" = 200 ] || { echo "a push was answered $1, not 200" >&2; exit 70; }
}

echo "shape $shape: body $body_bytes bytes ($(mib $((body_bytes / 1024))) MiB), ELEMENTS $elements"

start_server sequential
base=$(kib "$pid" VmRSS)
echo "sequential: server RSS before $(mib "$base") MiB"
for i in $(seq 0 $((sequential - 1))); do
  expect_ok "$(push "@$work/body$i.json" tok0)"
  rss=$(kib "$pid" VmRSS)
  hwm=$(kib "$pid" VmHWM)
  echo "  push $((i + 1)): RSS $(mib "$rss") MiB (growth $(mib $((rss - base))) MiB), peak so far $(mib "$hwm") MiB (growth $(mib $((hwm - base))) MiB)"
done
hwm=$(kib "$pid" VmHWM)
rss=$(kib "$pid" VmRSS)
echo "sequential: peak growth $(mib $((hwm - base))) MiB = $(awk -v g=$(((hwm - base) * 1024)) -v b="$body_bytes" 'BEGIN { printf "%.1f", g / b }') x body; RSS growth kept $(mib $((rss - base))) MiB"
stop_server

start_server concurrent
base=$(kib "$pid" VmRSS)
echo "concurrent: server RSS before $(mib "$base") MiB, $concurrent pushes at once"
codes=()
for i in $(seq 0 $((concurrent - 1))); do
  push "@$work/body$i.json" "tok$i" >"$work/code$i" &
  codes+=($!)
done
for job in "${codes[@]}"; do wait "$job"; done
for i in $(seq 0 $((concurrent - 1))); do expect_ok "$(cat "$work/code$i")"; done
hwm=$(kib "$pid" VmHWM)
rss=$(kib "$pid" VmRSS)
echo "concurrent: peak growth $(mib $((hwm - base))) MiB = $(awk -v g=$(((hwm - base) * 1024)) -v b="$body_bytes" 'BEGIN { printf "%.1f", g / b }') x body; RSS growth kept $(mib $((rss - base))) MiB"
stop_server

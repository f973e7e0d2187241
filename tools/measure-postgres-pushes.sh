#!/usr/bin/env bash
# Pushes per second of two sync-server processes on one PostgreSQL
# database, with the database's and the servers' CPU time per push, for one
# or more sync-server binaries whose runs alternate (a build before a
# change against the build after it, measured in the same minutes).
#
#   tools/measure-postgres-pushes.sh [-r ROUNDS] [-b "1 50"] [-c plain|urlsession] SERVER_BINARY...
#
# Each run: an empty schema, two servers (ports 18801 and 18802) of 8 users,
# then `sync-load` with 8 clients of those 8 users spread over both servers,
# --batch B, no pulls, 10 seconds. PostgreSQL runs in a throwaway cluster
# (tools/pg-test-cluster.sh) restarted with fsync=on and
# synchronous_commit=on, stopped at the end. sync-load comes from $BIN
# (default .build/release); -c chooses its HTTP client (default plain, so
# the load generator takes less of the CPU it shares with the servers).
# Per run it prints the sync-load report, then "cpu per push (us)":
# PostgreSQL's processes and the two servers, and "commits per 100 pushes"
# from pg_stat_database (every transaction: pushes, notifications, the
# listeners' reads of the notification queue).
set -euo pipefail
rounds=3
batches="1 50"
client=plain
while getopts "r:b:c:" option; do
  case $option in
    r) rounds=$OPTARG ;;
    b) batches=$OPTARG ;;
    c) client=$OPTARG ;;
    *) echo "usage: $0 [-r ROUNDS] [-b \"1 50\"] [-c plain|urlsession] SERVER_BINARY..." >&2; exit 64 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-r ROUNDS] [-b \"1 50\"] [-c plain|urlsession] SERVER_BINARY..." >&2; exit 64; }
here=$(cd "$(dirname "$0")/.." && pwd)
load=${BIN:-$here/.build/release}/sync-load
[ -x "$load" ] || { echo "$load is missing: swift build -c release --product sync-load" >&2; exit 66; }
for server in "$@"; do [ -x "$server" ] || { echo "$server is not an executable" >&2; exit 66; }; done
work=$(mktemp -d "${TMPDIR:-/tmp}/syncjournal-pushes.XXXXXX")
export PG_TEST_CLUSTER_STATE="$work/pg.state"
servers=()
cleanup() {
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  "$here/tools/pg-test-cluster.sh" stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

conninfo=$("$here/tools/pg-test-cluster.sh" start | tail -1)
dir=$(cat "$PG_TEST_CLUSTER_STATE")
port=$(cat "$dir/port")
bindir=$(cat "$dir/bindir")
# The test cluster runs without fsync; these runs need the disk's real cost.
as_owner=()
[ "$(id -u)" = 0 ] && as_owner=(runuser -u nobody --)
"${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -w -m fast stop >/dev/null
"${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -w -l "$dir/server.log" \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $dir/socket -c fsync=on -c synchronous_commit=on -c max_connections=200" start >/dev/null

users=(); tokens=()
for i in 0 1 2 3 4 5 6 7; do users+=(--user "tok$i:user$i"); tokens+=(--token "tok$i"); done
sql() { psql "$conninfo" -Atqc "$1"; }
# CPU clock ticks (1/100 s) of every process named postgres, or of one process.
postgres_ticks() {
  local total=0 line fields
  for stat in /proc/[0-9]*/stat; do
    read -r line < "$stat" 2>/dev/null || continue
    case $line in
      *"(postgres)"*) read -r -a fields <<< "${line#*) }"; total=$((total + fields[11] + fields[12])) ;;
    esac
  done
  echo "$total"
}
process_ticks() { local line fields; read -r line < "/proc/$1/stat"; read -r -a fields <<< "${line#*) }"; echo $((fields[11] + fields[12])); }
commits() { sql "select xact_commit from pg_stat_database where datname = current_database()"; }

run() {
  local server=$1 batch=$2 round=$3
  sql "drop schema if exists public cascade; create schema public" >/dev/null 2>&1
  "$server" --postgres "$conninfo" --port 18801 "${users[@]}" > "$work/s1.log" 2>&1 & servers=($!)
  "$server" --postgres "$conninfo" --port 18802 "${users[@]}" > "$work/s2.log" 2>&1 & servers+=($!)
  for _ in $(seq 100); do
    curl -s -o /dev/null http://127.0.0.1:18801/v1/health && curl -s -o /dev/null http://127.0.0.1:18802/v1/health && break
    sleep 0.1
  done
  local loadavg; loadavg=$(cut -d' ' -f1 /proc/loadavg)
  local postgres0 commits0; postgres0=$(postgres_ticks); commits0=$(commits)
  local report; report=$("$load" --client "$client" --server http://127.0.0.1:18801 --server http://127.0.0.1:18802 "${tokens[@]}" \
    --clients 8 --batch "$batch" --pulls-per-push 0 --seconds 10 2>&1) || true
  local postgres1 server1 server2; postgres1=$(postgres_ticks); server1=$(process_ticks "${servers[0]}"); server2=$(process_ticks "${servers[1]}")
  sleep 0.6   # the statistics collector reports commits within about half a second
  local commits1; commits1=$(commits)
  local pushes; pushes=$(echo "$report" | awk '/^pushes/ {print $2}')
  echo "== $server --batch $batch, round $round, load average $loadavg"
  echo "$report" | grep -E '^(pushes|errors|sync-load: [a-z])' || echo "$report"
  if [ "${pushes:-0}" -gt 0 ]; then
    echo "cpu per push (us): postgres $(( (postgres1 - postgres0) * 10000 / pushes )), servers $(( (server1 + server2) * 10000 / pushes )); commits per 100 pushes $(( (commits1 - commits0) * 100 / pushes ))"
  fi
  for pid in "${servers[@]}"; do kill "$pid"; wait "$pid" 2>/dev/null || true; done
  servers=()
}

for round in $(seq "$rounds"); do
  for batch in $batches; do
    for server in "$@"; do run "$server" "$batch" "$round"; done
  done
done

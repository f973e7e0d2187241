#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests of sync-server's PostgreSQL storage.
#
#   tools/pg-test-cluster.sh start   # initdb + pg_ctl start in a temporary directory; prints the conninfo
#   tools/pg-test-cluster.sh url     # prints the running cluster's conninfo
#   tools/pg-test-cluster.sh stop    # stops the cluster and removes its directory
#
# The cluster listens on 127.0.0.1 at a free TCP port and on a unix socket in
# its directory, trusts local connections (no password), and has a database
# syncjournal_test owned by the superuser "postgres". Its directory is kept in
# a state file, $PG_TEST_CLUSTER_STATE (default ${TMPDIR:-/tmp}/syncjournal-pg-test-cluster),
# so `url` and `stop` find it; give each cluster its own state file to run several.
# initdb and postgres refuse to run as root: as root, they run as the user
# $PG_TEST_CLUSTER_USER (default nobody) through runuser.
#
# With $PG_TEST_CLUSTER_OWNER_PID set, `start` also leaves a guard that stops
# the cluster once that process is gone, however it ended: a test process
# killed or crashed never runs its exit handler, and its cluster would
# otherwise outlive it.
set -euo pipefail

state=${PG_TEST_CLUSTER_STATE:-${TMPDIR:-/tmp}/syncjournal-pg-test-cluster}
run_as=${PG_TEST_CLUSTER_USER:-nobody}

fail() { echo "pg-test-cluster: $*" >&2; exit 1; }

find_bindir() {
  local candidate
  for candidate in "${PG_BINDIR:-}" "$(pg_config --bindir 2>/dev/null || true)" /usr/lib/postgresql/*/bin /usr/local/pgsql/bin /usr/local/bin /usr/bin; do
    if [ -n "$candidate" ] && [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ] && [ -x "$candidate/postgres" ]; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}

# Runs a PostgreSQL server program, as the unprivileged user when we are root.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$run_as" -- "$@"; else "$@"; fi
}

conninfo_of() { echo "host=127.0.0.1 port=$(cat "$1/port") user=postgres dbname=syncjournal_test"; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Closes every descriptor this script inherited beyond the standard three. A
# test runner waits for the end of a pipe it gave its test process; the
# postgres server and the guard outlive this script, and a copy of that pipe
# kept open in them would hold the runner, and the test process it has not
# reaped, forever. (Bash's own descriptor for the script, 255, closes itself
# on exec.)
close_inherited_descriptors() {
  local fd
  for fd in $(ls /dev/fd); do
    if [ "$fd" -gt 2 ] && [ "$fd" -ne 255 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
}

start() {
  close_inherited_descriptors
  # Checked before anything starts: a cluster must not be left without its guard.
  case "${PG_TEST_CLUSTER_OWNER_PID-0}" in ''|*[!0-9]*) fail "PG_TEST_CLUSTER_OWNER_PID is not a process id: $PG_TEST_CLUSTER_OWNER_PID" ;; esac
  if [ -f "$state" ] && [ -d "$(cat "$state")" ]; then fail "a cluster is already running in $(cat "$state") (stop it first, or set PG_TEST_CLUSTER_STATE)"; fi
  local bindir dir port attempt started=0
  bindir=$(find_bindir) || fail "initdb/pg_ctl/postgres not found (install postgresql, or set PG_BINDIR)"
  dir=$(mktemp -d "${TMPDIR:-/tmp}/syncjournal-pg.XXXXXX")
  # Until the cluster is up and recorded, a failure removes the directory.
  trap 'rm -rf "$dir"' EXIT
  chmod 755 "$dir"
  mkdir "$dir/data" "$dir/socket"
  if [ "$(id -u)" -eq 0 ]; then chown "$run_as" "$dir" "$dir/data" "$dir/socket"; fi
  echo "$bindir" > "$dir/bindir"
  if ! as_owner "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
     && ! as_owner "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2; rm -rf "$dir"; fail "initdb failed"
  fi
  for attempt in $(seq 1 20); do
    port=$(( (RANDOM % 30000) + 20000 ))
    port_in_use "$port" && continue
    # fsync off: a throwaway cluster needs no durability, and the tests run faster.
    if as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
         -o "-c listen_addresses=127.0.0.1 -p $port -k $dir/socket -c fsync=off -c max_connections=200" start >/dev/null 2>&1; then
      started=1; break
    fi
  done
  if [ "$started" -ne 1 ]; then cat "$dir/server.log" >&2 || true; rm -rf "$dir"; fail "the server did not start"; fi
  echo "$port" > "$dir/port"
  "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres syncjournal_test
  echo "$dir" > "$state"
  trap - EXIT
  if [ -n "${PG_TEST_CLUSTER_OWNER_PID:-}" ]; then guard "$PG_TEST_CLUSTER_OWNER_PID"; fi
  conninfo_of "$dir"
}

# Stops this cluster when process $1 ends. The guard runs in a session of its
# own with no inherited output, so nothing waits on it; it checks once a
# second, as a process cannot wait for another that is not its child. A
# zombie counts as ended: a runner whose own children still hold its pipe
# may not reap a killed test process for a long time.
guard() {
  local owner=$1 script
  script=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
  PG_TEST_CLUSTER_STATE=$state setsid bash -c '
    while state=$(ps -o stat= -p "$1") && [ "${state#Z}" = "$state" ]; do sleep 1; done
    bash "$2" stop' pg-test-cluster-guard "$owner" "$script" </dev/null >/dev/null 2>&1 &
}

stop() {
  [ -f "$state" ] || { echo "pg-test-cluster: no cluster (no $state)" >&2; return 0; }
  local dir; dir=$(cat "$state")
  if [ -d "$dir/data" ]; then
    as_owner "$(cat "$dir/bindir")/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir" "$state"
}

url() {
  [ -f "$state" ] || fail "no cluster (no $state); run start first"
  conninfo_of "$(cat "$state")"
}

usage() { echo "usage: $0 start|stop|url"; }
if [ $# -ne 1 ]; then
  [ $# -eq 0 ] && echo "pg-test-cluster: no command" >&2 || echo "pg-test-cluster: one command only" >&2
  usage >&2; exit 64
fi
case "$1" in
  start) start ;;
  stop) stop ;;
  url) url ;;
  -h|--help) usage ;;
  *) echo "pg-test-cluster: unknown command $1" >&2; usage >&2; exit 64 ;;
esac

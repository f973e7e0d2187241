#!/usr/bin/env bash
# The size of sync-server's database after many pushed mutations, with or
# without forgetting remembered operation ids (--operation-retention-days).
#
#   tools/measure-operation-retention.sh sqlite|postgres DAYS [MUTATIONS] [CLIENTS]
#
# DAYS is passed to --operation-retention-days: "never" keeps every
# operation; a small decimal (0.0005 is 43.2 seconds) lets the server's
# background pruning (once a minute) forget operations while the load runs,
# so the end of the run shows the steady state of a server whose retention
# is short against its traffic. MUTATIONS (default 1000000) are new records
# pushed by sync-load's preload: CLIENTS (default 4) clients, 500 mutations
# a push. Prints the row counts and sizes, one "name value" a line.
# Binaries come from $BIN (default .build/debug); build sync-server and
# sync-load first. PostgreSQL runs in a throwaway cluster (tools/pg-test-cluster.sh)
# that is stopped at the end.
set -euo pipefail
backend=${1:?sqlite or postgres}
days=${2:?retention days or never}
total=${3:-1000000}
clients=${4:-4}
bin=${BIN:-.build/debug}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/syncjournal-retention.XXXXXX")
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [ "$backend" = postgres ]; then PG_TEST_CLUSTER_STATE="$work/pg.state" "$here/tools/pg-test-cluster.sh" stop >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

case "$backend" in
  sqlite) storage=(--db "$work/sync.sqlite") ;;
  postgres)
    PG_TEST_CLUSTER_STATE="$work/pg.state" "$here/tools/pg-test-cluster.sh" start >/dev/null
    conninfo=$(PG_TEST_CLUSTER_STATE="$work/pg.state" "$here/tools/pg-test-cluster.sh" url)
    storage=(--postgres "$conninfo") ;;
  *) echo "usage: $0 sqlite|postgres DAYS [MUTATIONS] [CLIENTS]" >&2; exit 64 ;;
esac

"$bin/sync-server" --port 0 "${storage[@]}" --operation-retention-days "$days" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
port=
for _ in $(seq 1 600); do
  port=$(sed -n 's|^sync-server listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/server.out")
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "sync-server did not start" >&2; exit 1; }

started=$(date +%s)
"$bin/sync-load" --server "http://127.0.0.1:$port" --clients "$clients" --preload $(( total / clients )) \
  --batch 500 --pulls-per-push 0 --seconds 0.001 >"$work/load.out" 2>&1 || echo "sync_load_exit_status $?"
sed "s/^/sync-load: /" "$work/load.out" >&2
grep -i "error\|refused\|failed" "$work/load.out" | head -5 | sed "s/^/load_error /" || true
echo "preloaded_mutations $(( total / clients * clients ))"
echo "load_seconds $(( $(date +%s) - started ))"

kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=

if [ "$backend" = sqlite ]; then
  echo "remembered_operations $(sqlite3 "$work/sync.sqlite" 'select count(*) from operations')"
  echo "sqlite_file_bytes $(stat -c %s "$work/sync.sqlite")"
  # Pages per table and index, when this SQLite has the dbstat table.
  sqlite3 "$work/sync.sqlite" "select 'sqlite_' || name || '_bytes', sum(pgsize) from dbstat group by name order by name" 2>/dev/null | tr '|' ' ' || true
else
  psql "$conninfo" -Atq -F ' ' -c "select 'remembered_operations', count(*) from operations" \
    -c "select 'pg_total_relation_size_operations', pg_total_relation_size('operations')" \
    -c "select 'pg_total_relation_size_rows', pg_total_relation_size('rows')" \
    -c "select 'pg_database_size', pg_database_size(current_database())"
fi

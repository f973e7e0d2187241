#!/usr/bin/env bash
# Three accounts share one list through the notes example app and a real
# sync-server, and every outcome is checked:
#
#   tools/sharing-session.sh sqlite|postgres
#
# dad owns "Weekend pins"; kid is an editor; grandma starts as an editor and
# is made a viewer. The owner clears the list offline while the kid adds a
# note (both end with the kid's note only); grandma's edit made before her
# device learned she is a viewer is rejected by the server and shown, and a
# later one is refused on the device (exit 77); the kid is removed with a
# note queued: the kid's device then lists none of the list's notes and
# shows the queued one as not kept.
#
# Prints the session as a console transcript, then "sharing session: all
# checks held" (exit 0), or the first failed check (exit 1). Binaries come
# from $BIN (default .build/debug; build notes and sync-server first).
# PostgreSQL runs in a throwaway cluster (tools/pg-test-cluster.sh).
set -euo pipefail
backend=${1:?sqlite or postgres}
bin=${BIN:-.build/debug}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/syncjournal-sharing.XXXXXX")
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [ "$backend" = postgres ]; then PG_TEST_CLUSTER_STATE="$work/pg.state" "$here/tools/pg-test-cluster.sh" stop >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

case "$backend" in
  sqlite) storage=(--db "$work/family.sqlite") ;;
  postgres)
    PG_TEST_CLUSTER_STATE="$work/pg.state" "$here/tools/pg-test-cluster.sh" start >/dev/null
    storage=(--postgres "$(PG_TEST_CLUSTER_STATE="$work/pg.state" "$here/tools/pg-test-cluster.sh" url)") ;;
  *) echo "usage: $0 sqlite|postgres" >&2; exit 64 ;;
esac

"$bin/sync-server" --port 0 "${storage[@]}" --user t-dad:dad --user t-kid:kid --user t-gran:grandma \
  >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
port=
for _ in $(seq 1 600); do
  port=$(sed -n 's|^sync-server listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/server.out")
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "sync-server did not start" >&2; exit 1; }
server="http://127.0.0.1:$port"
echo "# sync-server on $backend at $server; S=$server"

declare -A token=([dad]=t-dad [kid]=t-kid [gran]=t-gran)
status=0
output=
# notes DEVICE ARGS...: runs the app on DEVICE's directory (with its server
# and token where the command talks to the server), prints the transcript
# line and the output, and keeps both the output and the exit status.
notes() {
  local device=$1; shift
  local extra=()
  case "$1 ${2:-}" in
    sync*|status*|"space create"|"space add"|"space remove") extra=(--server "$server" --token "${token[$device]}") ;;
  esac
  local shown=() arg
  for arg in "$@"; do if [[ "$arg" == *" "* ]]; then shown+=("\"$arg\""); else shown+=("$arg"); fi; done
  echo "\$ notes ${shown[*]} --dir $device${extra:+ --server \$S --token ${token[$device]}}"
  set +e
  output=$("$bin/notes" "$@" --dir "$work/$device" "${extra[@]}" 2>&1)
  status=$?
  set -e
  [ -z "$output" ] || echo "$output"
  [ "$status" -eq 0 ] || echo "(exit $status)"
}
check() {
  local what=$1; shift
  if "$@"; then echo "# ok: $what"; else echo "sharing session: FAILED: $what" >&2; exit 1; fi
}
succeeded() { [ "$status" -eq 0 ]; }
says() { grep -q -- "$1" <<<"$output"; }
lacks() { ! grep -q -- "$1" <<<"$output"; }

notes dad space create "Weekend pins"; check "the owner creates the list" succeeded
notes dad space add "Weekend pins" kid --role editor; check "the owner adds the kid as an editor" says "kid (editor)"
notes dad space add "Weekend pins" grandma --role editor; check "the owner adds grandma as an editor" says "grandma (editor)"
notes dad add museum --space "Weekend pins"; museum=$output
notes dad sync; check "the owner's note reaches the server" succeeded
for device in kid gran; do notes "$device" sync; check "$device syncs" succeeded; done
notes kid list --json; check "the kid sees the owner's note in the list" says '"text":"museum","pinned":false,"space":"Weekend pins"'

echo "# The pins race: dad clears the list offline while the kid adds a note."
notes dad rm "$museum"; check "the owner's removal is queued offline" succeeded
notes kid add "tapas bar" --space "Weekend pins"
notes kid sync; check "the kid's note reaches the server first" succeeded
notes dad sync; check "the owner's removal reaches the server" succeeded
notes kid sync
for device in dad kid; do
  notes "$device" list --json
  check "$device sees the kid's note and not the cleared one" says '"text":"tapas bar"'
  check "$device no longer sees the cleared note" lacks '"text":"museum"'
done

echo "# grandma becomes a viewer; her device has not heard yet."
notes dad space add "Weekend pins" grandma --role viewer; check "the owner makes grandma a viewer" says "grandma (viewer)"
notes gran add knitting --space "Weekend pins"; check "grandma's device still believes she may write" succeeded
notes gran sync
notes gran list; check "the server rejected grandma's edit and her device shows it" says 'not kept: add "knitting"'
notes gran add crochet --space "Weekend pins"; check "once her device knows, a viewer's edit is refused on the device (exit 77)" test "$status" -eq 77
check "and the refusal says why" says "viewer"

echo "# The kid is removed while a note of theirs is queued."
notes kid add arcade --space "Weekend pins"
notes dad space remove "Weekend pins" kid; check "the owner removes the kid" lacks "kid ("
notes kid sync; check "the kid's device syncs" succeeded
notes kid list --json
check "the kid's device lists none of the list's notes" lacks '"space":"Weekend pins"'
check "the kid's queued note is shown as rejected" says '"rejected"'
notes kid list; check "and as not kept, with the reason" says 'not kept: add "arcade": no access to space'
notes dad list --json; check "the owner never received the kid's late note" lacks '"text":"arcade"'
echo "sharing session: all checks held"

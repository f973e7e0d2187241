#!/usr/bin/env bash
# Fails when a Swift file outside the platform layer names the C library
# module of a platform (Glibc, Musl, Darwin) as an identifier: every system
# call goes through Sources/SyncJournalPlatform (or, for sockets and the
# poller only servers use, Sources/SyncJournalServerPlatform), so the rest builds unchanged
# on Linux and Apple platforms.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tools/check-platform-names.sh [--help]

Searches every .swift file under Sources/, tools/ and Tests/, except
Sources/SyncJournalPlatform/ and Sources/SyncJournalServerPlatform/, for Glibc, Musl or Darwin used as an
identifier (an import, a canImport check, a qualified name such as
Glibc.open). Comment lines and words inside string literals on a line are
not flagged. Prints file:line for each use found.

Exit status: 0 when there is none, 1 when there is one or more,
64 for an unknown argument.
USAGE
}

case "${1:-}" in
  --help|-h) usage; exit 0 ;;
  "") ;;
  *) echo "check-platform-names.sh: unknown argument: $1" >&2; usage >&2; exit 64 ;;
esac

cd "$(dirname "$0")/.."

found=0
while IFS= read -r -d '' file; do
  # Drop comment lines and string literals, then look for the names as whole words.
  matches=$(awk '
    {
      line = $0
      sub(/^[ \t]*\/\/.*$/, "", line)
      gsub(/"([^"\\]|\\.)*"/, "\"\"", line)
      sub(/[ \t]\/\/.*$/, "", line)
      if (line ~ /(^|[^A-Za-z0-9_])(Glibc|Musl|Darwin)([^A-Za-z0-9_]|$)/) print FILENAME ":" FNR ": " $0
    }' "$file")
  if [ -n "$matches" ]; then
    echo "$matches"
    found=1
  fi
done < <(find Sources tools Tests -name '*.swift' -not -path 'Sources/SyncJournalPlatform/*' -not -path 'Sources/SyncJournalServerPlatform/*' -print0 | sort -z)

if [ "$found" -ne 0 ]; then
  echo "check-platform-names.sh: Glibc, Musl or Darwin named outside the platform layer (Sources/SyncJournalPlatform, Sources/SyncJournalServerPlatform)" >&2
  exit 1
fi
echo "check-platform-names.sh: no platform module names outside the platform layer"

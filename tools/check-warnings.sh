#!/usr/bin/env bash
# Builds the package and its tests (swift build --build-tests) and fails if
# the compiler warns about any file under Sources/ or tools/: library and tool
# code stays warning-free. Warnings in Tests/ are printed as a count only.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tools/check-warnings.sh [--help]

Runs `swift build --build-tests` and prints every compiler warning whose file
lies under Sources/ or tools/. The build is the one `swift test` then reuses.
The compiler warns only about files it compiles, so an incremental build
checks what changed; a clean clone (as in CI) checks everything.

Exit status: 0 the build succeeded without such warnings; 1 it warned (the
warnings are printed) or the build failed; 64 usage error.
USAGE
}

for argument in "$@"; do
  case "$argument" in
    -h|--help) usage; exit 0 ;;
    *) echo "check-warnings: unknown argument: $argument" >&2; usage >&2; exit 64 ;;
  esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

status=0
swift build --build-tests >"$log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  grep -E 'error:' "$log" | sort -u | head -n 50 || true
  echo "check-warnings: swift build --build-tests failed (exit $status)"
  exit 1
fi

# A warning names its file first: /abs/path/Sources/...:LINE:COLUMN: warning: ...
# A warning inside a macro expansion names the expansion first and its origin on
# the next line ("`- /abs/path/...:LINE:COLUMN: note: expanded code originates here").
# The same warning is printed once per compiled batch: keep each once.
warnings=$(awk '
  /^[^ ].*:[0-9]+:[0-9]+: warning: / && $0 !~ /^macro expansion / { print; next }
  /^macro expansion .*: warning: / { pending = $0; sub(/^.*: warning: /, "", pending); next }
  pending != "" && /note: expanded code originates here/ {
    origin = $0
    sub(/^[^\/]*/, "", origin)
    sub(/: note: expanded code originates here.*$/, "", origin)
    print origin ": warning: " pending " (in a macro expansion)"
    pending = ""
  }
' "$log" | sed "s|^$root/||" | sort -u)
ours=$(echo "$warnings" | grep -E '^(Sources|tools)/' || true)
tests=$(echo "$warnings" | grep -cE '^Tests/' || true)
if [ -n "$ours" ]; then
  echo "$ours"
  echo "check-warnings: FAILED: $(echo "$ours" | wc -l) warning(s) in Sources/ or tools/"
  exit 1
fi
echo "check-warnings: no warnings in Sources/ or tools/ (warnings in Tests/: ${tests:-0})"

#!/usr/bin/env bash
# Builds the documentation of the SyncJournal library product with DocC, as
# Xcode would: the symbol graph of the SyncJournal module holds the symbols
# of the modules it re-exports (@_exported import), and `docc convert` turns
# it and the catalog Sources/SyncJournal/SyncJournal.docc into an archive.
# Any warning (a link that does not resolve or is ambiguous, an article
# whose name is taken) fails the run.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tools/check-docc.sh [--output DIR] [--help]

Builds the SyncJournal module (swift build --target SyncJournal, reusing
an existing debug build), extracts its public symbol graph with the symbols
of every module Sources/SyncJournal re-exports, and runs `docc convert` on
the catalog with it. Prints every DocC warning and error.

  --output DIR   where to leave SyncJournal.doccarchive (default: a
                 temporary directory, removed afterwards)
  --help         print this help

Exit status: 0 DocC converted the catalog with no warning; 1 it warned or
failed (the diagnostics are printed); 64 usage error.
USAGE
}

output=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --output)
      [ $# -ge 2 ] || { echo "check-docc: --output needs a directory" >&2; usage >&2; exit 64; }
      output=$2; shift ;;
    *) echo "check-docc: unknown argument: $1" >&2; usage >&2; exit 64 ;;
  esac
  shift
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
started=$SECONDS

# The tools sit beside `swift` in the toolchain.
toolchain_bin=$(dirname "$(readlink -f "$(command -v swift)")")
docc="$toolchain_bin/docc"
extract="$toolchain_bin/swift-symbolgraph-extract"
for tool in "$docc" "$extract"; do
  [ -x "$tool" ] || { echo "check-docc: $tool not found (it ships with the Swift toolchain)"; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$output" ]; then output="$work/out"; fi
mkdir -p "$output" "$work/symbol-graphs"

if ! swift build --target SyncJournal >"$work/build.log" 2>&1; then
  tail -n 40 "$work/build.log"
  echo "check-docc: FAILED: the SyncJournal module does not build"
  exit 1
fi
bin=$(swift build --show-bin-path)
modules="$bin/Modules"
[ -d "$modules" ] || modules="$bin"
triple=$(swift -print-target-info | sed -n 's/^ *"triple": *"\([^"]*\)".*/\1/p' | head -n 1)

# The modules the product re-exports: their symbols are the product's API.
reexported=$(sed -n 's/^@_exported import \([A-Za-z0-9_]*\).*/\1/p' Sources/SyncJournal/*.swift | sort -u | paste -sd, -)

# The C modules (module maps SwiftPM wrote, headers under Sources/*/include).
clang_flags=()
for map in "$bin"/*.build/module.modulemap; do
  [ -e "$map" ] && clang_flags+=(-Xcc "-fmodule-map-file=$map")
done
for include in Sources/*/include; do
  [ -d "$include" ] && clang_flags+=(-Xcc -I -Xcc "$root/$include")
done

if ! "$extract" -module-name SyncJournal -target "$triple" -I "$modules" "${clang_flags[@]}" \
     -minimum-access-level public -experimental-allowed-reexported-modules="$reexported" \
     -output-dir "$work/symbol-graphs" >"$work/extract.log" 2>&1; then
  cat "$work/extract.log"
  echo "check-docc: FAILED: swift-symbolgraph-extract could not read the SyncJournal module"
  exit 1
fi

status=0
"$docc" convert Sources/SyncJournal/SyncJournal.docc \
  --additional-symbol-graph-dir "$work/symbol-graphs" \
  --fallback-display-name SyncJournal --fallback-bundle-identifier SyncJournal \
  --output-path "$output/SyncJournal.doccarchive" >"$work/docc.log" 2>&1 || status=$?

warnings=$(grep -c '^warning: ' "$work/docc.log" || true)
errors=$(grep -c '^error: ' "$work/docc.log" || true)
if [ "$status" -ne 0 ] || [ "$warnings" -gt 0 ] || [ "$errors" -gt 0 ]; then
  cat "$work/docc.log"
  echo "check-docc: FAILED: docc convert exited $status with $warnings warnings and $errors errors"
  exit 1
fi
symbols=$(grep -o '"precise"' "$work/symbol-graphs/SyncJournal.symbols.json" | wc -l | tr -d ' ')
echo "check-docc: the catalog converts with no warning ($symbols symbols from SyncJournal and $reexported; $((SECONDS - started)) s)"

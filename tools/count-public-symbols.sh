#!/usr/bin/env bash
# Counts the public API an app sees through `import SyncJournal` (plus the
# HTTP transport it adds on top): every public symbol, members included, per
# module, and the total.
#
#   tools/count-public-symbols.sh [--skip-dump] [--list MODULE] [--undocumented]
#
# It runs `swift package dump-symbol-graph --minimum-access-level public`
# (which builds the package) and reads the graphs it writes (the directory it
# names on its last line, `.build/<triple>/symbolgraph/` on Linux).
#
# What counts, and how nothing is counted twice:
#   - the modules are the ones the umbrella `SyncJournal` re-exports (read from
#     its `@_exported import` lines), the umbrella itself, and SyncJournalHTTP;
#   - a module's symbols are those in its own graph, `M.symbols.json`, plus
#     those it declares in extensions of another module's types,
#     `M@Other.symbols.json` (each symbol is in the graph of the module that
#     declares it, so an extension member counts once, for its declaring module);
#   - symbols are identified by their precise identifier (USR) and each is
#     counted once, for the first module in the order above: the umbrella's
#     graph repeats what it re-exports, so it is counted last and only its own
#     declarations remain.
#
# The count is every symbol, synthesized members included (the `!=`, `hash`
# and `init(rawValue:)` a conformance adds); a second column counts only
# the ones written in the source (they have a source location).
#
# --skip-dump reads the graphs of an earlier run; --list MODULE prints that
# module's symbols (kind and path) instead of the counts; --undocumented
# prints the counted symbols declared in source without a `///` comment
# (synthesized members, which have no place in the source, are left out)
# and exits 1 if there are any.
# Exit status: 0 counted, 64 bad arguments, 1 the dump failed.
set -euo pipefail

usage() { echo "usage: $0 [--skip-dump] [--list MODULE] [--undocumented]"; }
skip_dump=0
list=""
undocumented=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --skip-dump) skip_dump=1; shift ;;
    --undocumented) undocumented=1; shift ;;
    --list) [[ $# -ge 2 ]] || { usage >&2; exit 64; }; list="$2"; shift 2 ;;
    *) usage >&2; exit 64 ;;
  esac
done

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

umbrella=SyncJournal
reexported=$(sed -n 's/^@_exported import \([A-Za-z0-9_]*\).*/\1/p' "Sources/$umbrella/$umbrella.swift")
modules="$reexported $umbrella SyncJournalHTTP"

graphs=""
if [[ $skip_dump -eq 0 ]]; then
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  # The dump exits 1 when it cannot load the test bundles' modules (they are
  # only built with --build-tests); the library graphs are written all the
  # same, and their directory is on its last line.
  swift package dump-symbol-graph --minimum-access-level public >"$log" 2>&1 || true
  graphs=$(sed -n 's/^Files written to //p' "$log" | tail -1)
  for module in $modules; do
    if grep -q "Failed to emit symbol graph for '$module'" "$log" || [[ -z "$graphs" ]]; then
      cat "$log" >&2
      echo "$0: no symbol graph for $module" >&2
      exit 1
    fi
  done
fi
[[ -n "$graphs" ]] || graphs=$(find .build -maxdepth 3 -type d -name symbolgraph | head -1)
[[ -n "$graphs" ]] || { echo "$0: no symbol graphs under .build" >&2; exit 1; }

python3 - "$graphs" "$list" "$undocumented" $modules <<'PY'
import json, os, sys
graphs, listed, undocumented, modules = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4:]
missing = []
seen = set()
counts = {}
declared = {}
names = {}
for module in modules:
    files = sorted(f for f in os.listdir(graphs)
                   if f == f"{module}.symbols.json" or f.startswith(f"{module}@"))
    count = 0
    written = 0
    for name in files:
        with open(os.path.join(graphs, name)) as handle:
            graph = json.load(handle)
        for symbol in graph.get("symbols", []):
            usr = symbol["identifier"]["precise"]
            if usr in seen:
                continue
            seen.add(usr)
            count += 1
            written += "location" in symbol
            line = f'{symbol["kind"]["identifier"].removeprefix("swift.")} {".".join(symbol["pathComponents"])}'
            names.setdefault(module, []).append(line)
            if "location" in symbol and "docComment" not in symbol:
                location = symbol["location"]
                missing.append(f'{location["uri"].removeprefix("file://")}:{location["position"]["line"] + 1}: {line}')
    counts[module] = count
    declared[module] = written
if undocumented:
    for line in sorted(missing):
        print(line)
    sys.exit(1 if missing else 0)
if listed:
    for line in sorted(names.get(listed, [])):
        print(line)
else:
    print(f"{'module':<20} {'all':>5} {'declared':>9}")
    for module in modules:
        print(f"{module:<20} {counts[module]:>5} {declared[module]:>9}")
    print(f"{'total':<20} {sum(counts.values()):>5} {sum(declared.values()):>9}")
PY

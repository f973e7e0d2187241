#!/usr/bin/env bash
# Measures append rates (durable, group commit, bulk) and verify speed with
# the release build, on the disk under DIR (default journals/measure).
# Rough figures for the README; the ratio-based benchmark is journal-bench.
#
#   tools/measure-journal.sh [DIR]
#
# DIR is created if missing; only the files this script writes in it are
# replaced, so a mistyped DIR never deletes anything else.
set -euo pipefail
usage() { echo "usage: $0 [DIR]   (default journals/measure)"; }
case $# in
  0) ;;
  1)
    case "$1" in
      -h|--help) usage; exit 0 ;;
      -*) echo "$0: unknown option $1" >&2; usage >&2; exit 64 ;;
    esac ;;
  *) echo "$0: too many arguments" >&2; usage >&2; exit 64 ;;
esac
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
swift build -c release --product journal-crash >/dev/null
swift build -c release --product journal-dump >/dev/null
bin="$(swift build -c release --show-bin-path)"
dir="${1:-journals/measure}"
mkdir -p -- "$dir"

now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; }

run() { # name records args...
  local name="$1" n="$2"
  shift 2
  rm -f -- "$dir/$name.journal" "$dir/$name.journal.lock"
  local start end
  start=$(now)
  "$bin/journal-crash" write "$dir/$name.journal" --records "$n" "$@" >/dev/null 2>&1
  end=$(now)
  echo "$name: $n records in $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }') s = $(rate "$n" "$start" "$end") records/s"
}

run durable 5000
run group-commit 100000 --group-commit --writers 64
run bulk 1000000 --bulk

bytes=$(stat -c %s "$dir/bulk.journal")
cat "$dir/bulk.journal" >/dev/null   # page-cached, so the figure is the reader's, not the disk's
start=$(now)
"$bin/journal-dump" --verify "$dir/bulk.journal" >/dev/null
end=$(now)
echo "verify: $bytes bytes in $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }') s = $(awk -v n="$bytes" -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", n / (b - a) / 1048576 }') MiB/s"

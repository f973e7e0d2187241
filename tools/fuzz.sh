#!/usr/bin/env bash
# Builds the fuzz targets with the toolchain's libFuzzer (-sanitize=fuzzer)
# and runs each for a bounded time, seeded from journals/.
#
#   tools/fuzz.sh [--seconds N] [--target journal-reader|server-reply|wire-messages|all]
#                 [--sanitize fuzzer|fuzzer,address] [--scratch-path DIR] [--keep]
#
#   journal-reader  any bytes as a journal file: reader, decoders, replay,
#                   journal-dump's renderings, store recovery and checkpoint
#                   (seeds: journals/samples/*.journal, journals/golden/*.journal)
#   server-reply    any bytes as a script of server replies to a sync engine
#                   (seeds: the target's hand-made inputs, `--make-seeds`)
#
# Every target also starts from its regression files,
# journals/fuzz-regressions/<target>/. The seeds are copied into a temporary
# corpus; nothing under journals/ is written. For each target the script
# prints the executions, executions per second and new inputs found; on a
# crash, a hang (-timeout) or running out of memory (-rss_limit_mb) it prints
# the input libFuzzer saved and the command that replays it, and exits 1.
# Such an input becomes a regression file (see journals/fuzz-regressions/README.md).
#
# Defaults: 60 seconds per target, every target, -sanitize=fuzzer, build
# directory .build-fuzz. One process, one job: it fits a 2-core CI machine.
# `--sanitize fuzzer,address` adds AddressSanitizer (for the C and unsafe-
# pointer code) at about 2.3x fewer executions per second; its per-input leak
# check is off (-detect_leaks=0: it costs another 10x, and -rss_limit_mb
# catches memory that grows without bound).
set -euo pipefail

seconds=60
targets=(journal-reader server-reply wire-messages)
sanitize=fuzzer
scratch=""
keep=0
usage() {
  echo "usage: $0 [--seconds N] [--target journal-reader|server-reply|wire-messages|all] [--sanitize fuzzer|fuzzer,address] [--scratch-path DIR] [--keep]"
}
bad_usage() { echo "$0: $1" >&2; usage >&2; exit 64; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) [[ $# -ge 2 && "$2" =~ ^[0-9]+$ && "$2" -gt 0 ]] || bad_usage "--seconds needs a whole number above 0"; seconds="$2"; shift 2 ;;
    --target)
      [[ $# -ge 2 ]] || bad_usage "--target needs a target name"
      case "$2" in
        journal-reader|server-reply|wire-messages) targets=("$2") ;;
        all) targets=(journal-reader server-reply wire-messages) ;;
        *) bad_usage "unknown target $2" ;;
      esac
      shift 2 ;;
    --sanitize)
      [[ $# -ge 2 ]] || bad_usage "--sanitize needs fuzzer or fuzzer,address"
      case "$2" in
        fuzzer|fuzzer,address|address,fuzzer) sanitize="$2" ;;
        *) bad_usage "--sanitize takes fuzzer or fuzzer,address, not $2" ;;
      esac
      shift 2 ;;
    --scratch-path) [[ $# -ge 2 && -n "$2" ]] || bad_usage "--scratch-path needs a directory"; scratch="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) bad_usage "unknown argument $1" ;;
  esac
done

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scratch="${scratch:-$root/.build-fuzz}"

# Swift's own crash reporter would take the signal before libFuzzer could
# save the input; hashing is made deterministic so a replay takes the same path.
export SWIFT_BACKTRACE=enable=no
export SWIFT_DETERMINISTIC_HASHING=1

build() {
  swift build -c release --scratch-path "$scratch" \
    -Xswiftc "-sanitize=$sanitize" -Xswiftc -DFUZZING --product "fuzz-$1" >&2
}

work="$(mktemp -d "${TMPDIR:-/tmp}/syncjournal-fuzz.XXXXXX")"
failed=0
for target in "${targets[@]}"; do
  echo "== fuzz-$target: building (-sanitize=$sanitize, $scratch)"
  build "$target"
  bin="$scratch/release/fuzz-$target"
  corpus="$work/$target/corpus"
  artifacts="$work/$target/artifacts"
  mkdir -p "$corpus" "$artifacts"
  case "$target" in
    journal-reader)
      cp journals/samples/*.journal journals/golden/*.journal "$corpus/"
      max_len=8192 ;;
    server-reply)
      "$bin" --make-seeds "$corpus" >/dev/null
      max_len=2048 ;;
    wire-messages)
      "$bin" --make-seeds "$corpus" >/dev/null
      max_len=4096 ;;
  esac
  regressions="journals/fuzz-regressions/$target"
  if [[ -d "$regressions" ]]; then
    find "$regressions" -maxdepth 1 -type f ! -name '*.md' -exec cp {} "$corpus/" \;
  fi
  seeds=$(find "$corpus" -type f | wc -l)
  log="$work/$target/fuzz.log"
  extra=()
  [[ "$sanitize" == *address* ]] && extra=(-detect_leaks=0)
  command=("$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" "${extra[@]}"
           -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus")
  echo "== fuzz-$target: $seconds s from $seeds seeds: ${command[*]}"
  status=0
  "${command[@]}" >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  added=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  if [[ -z "$execs" ]]; then
    # No final stats (the run died): the last progress line has the count.
    execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  fi
  found=$(find "$artifacts" -type f | sort)
  if [[ $status -ne 0 || -n "$found" ]]; then
    failed=1
    echo "FAIL fuzz-$target after ${execs:-?} executions (libFuzzer exit status $status)"
    grep -E 'fuzz finding|Fatal error|ERROR: libFuzzer|==ERROR|SUMMARY|deadly signal|timeout after|out-of-memory' "$log" | head -5 | sed 's/^/  /' || true
    for input in $found; do
      echo "  input: $input"
      echo "  replay: swift run fuzz-$target $input    (or: $bin $input)"
    done
    echo "  log: $log"
  else
    echo "ok   fuzz-$target: $execs executions in $seconds s ($rate/s), $added new inputs, peak RSS ${rss} MB"
  fi
done

if [[ $failed -ne 0 || $keep -eq 1 ]]; then
  echo "corpus, logs and inputs kept in $work"
else
  rm -rf "$work"
fi
exit $failed

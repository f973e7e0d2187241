#!/usr/bin/env bash
# Kills `journal-crash write` with SIGKILL at random moments and checks that
# every sequence number it printed as `acked` is still in the journal, that the
# journal is clean or has a torn tail, and that the next writer continues it
# with the next sequence number.
#
#   tools/crash-test.sh [--kills N] [--group-commit | --store] [--dir DIR] [--negative-control]
#
# Prints one line per kill and a summary; exits 1 if any acknowledged record
# was lost or a check failed. --negative-control runs a writer that lies (it
# acknowledges records 5 ahead of what is durable) and exits 0 only if the
# test catches the loss: proof that the check can fail.
#
# --store kills `journal-crash store` instead: concurrent editors making
# creates, updates, deletes and transactions through LocalStore, with
# checkpoints, each run with a fresh seed. After each kill
# `journal-crash store-verify` reopens the store and checks every
# acknowledged edit of that run (in-flight calls all or nothing); at the end
# it checks every run's acknowledged edits again, so a later run or
# checkpoint cannot have lost an earlier one. Its negative control
# acknowledges each edit before making the store call.
set -euo pipefail

kills=50
mode=()
store=0
dir=""
lie=()
usage() { echo "usage: $0 [--kills N] [--group-commit | --store] [--dir DIR] [--negative-control]"; }
bad_usage() { echo "$0: $1" >&2; usage >&2; exit 64; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kills)
      [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || bad_usage "--kills needs a whole number"
      kills="$2"; shift 2 ;;
    --group-commit) mode=(--group-commit); shift ;;
    --store) store=1; shift ;;
    --dir)
      [[ $# -ge 2 && -n "$2" && "$2" != -* ]] || bad_usage "--dir needs a directory"
      dir="$2"; shift 2 ;;
    --negative-control) lie=(--ack-ahead 5); shift ;;
    -h|--help) usage; exit 0 ;;
    *) bad_usage "unknown argument $1" ;;
  esac
done

if [[ "$store" -eq 1 && ${#mode[@]} -gt 0 ]]; then bad_usage "--store and --group-commit are two different writers; give one"; fi

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
swift build --product journal-crash >/dev/null
swift build --product journal-dump >/dev/null
bin="$(swift build --show-bin-path)"
dir="${dir:-journals/crash-test}"
rm -rf -- "$dir"
mkdir -p -- "$dir"
journal="$dir/crash.journal"

if [[ "$store" -eq 1 ]]; then
  [[ ${#lie[@]} -gt 0 ]] && lie=(--ack-early)
  journal="$dir/store.journal"
  : >"$dir/all.out"
  acked_total=0
  lost_total=0
  failures=0
  for ((i = 1; i <= kills; i++)); do
    out="$dir/run-$i.out"
    # Record ids carry the seed, so each run's seed must be new: the kill number keeps it so.
    seed=$((i * 1000000 + RANDOM))
    "$bin/journal-crash" store "$journal" --seed "$seed" --edits 100000000 "${lie[@]}" >"$out" 2>"$dir/run-$i.err" &
    pid=$!
    sleep "0.$(printf '%03d' $((RANDOM % 380 + 20)))"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true

    # Only complete lines count: a line cut by the kill was not fully printed.
    if [[ -s "$out" && -n "$(tail -c 1 "$out")" ]]; then sed '$d' "$out" >"$out.complete"; else cp "$out" "$out.complete"; fi
    cat "$out.complete" >>"$dir/all.out"
    count=$(grep -c '^acked ' "$out.complete" || true)

    status=0
    "$bin/journal-crash" store-verify "$journal" --acks "$out.complete" >"$dir/verify-$i.out" 2>&1 || status=$?
    summary=$(tail -n 1 "$dir/verify-$i.out")
    lost=$(printf '%s' "$summary" | { grep -o ', lost [0-9]*' || true; } | grep -o '[0-9]*$' || true)
    if [[ -z "$lost" || "$status" -gt 1 ]]; then
      echo "kill $i (seed $seed): the check failed (exit $status): $summary" >&2
      failures=$((failures + 1))
      lost=0
    elif [[ "$status" -eq 1 && ${#lie[@]} -eq 0 ]]; then
      head -n 5 "$dir/verify-$i.out" >&2
      if [[ "$lost" -eq 0 ]]; then failures=$((failures + 1)); fi   # a torn transaction
    fi
    acked_total=$((acked_total + count))
    lost_total=$((lost_total + lost))
    echo "kill $i: seed $seed, acknowledged $count, lost $lost (${summary#store check: })"
  done

  # Every run's acknowledged edits once more: later runs and their checkpoints kept them.
  status=0
  "$bin/journal-crash" store-verify "$journal" --acks "$dir/all.out" >"$dir/verify-all.out" 2>&1 || status=$?
  echo "all runs: $(tail -n 1 "$dir/verify-all.out")"
  if [[ "$status" -ne 0 && ${#lie[@]} -eq 0 ]]; then
    head -n 5 "$dir/verify-all.out" >&2
    failures=$((failures + 1))
  fi

  echo "crash test (--store)${lie:+ (negative control: acknowledged before the store call)}: kills $kills, edits acknowledged $acked_total, edits lost $lost_total, failed checks $failures"
  if [[ ${#lie[@]} -gt 0 ]]; then
    if [[ "$lost_total" -gt 0 ]]; then
      echo "negative control: the early-acknowledging writer was caught"
      exit 0
    fi
    echo "negative control: the early-acknowledging writer was NOT caught; the store crash test cannot fail" >&2
    exit 1
  fi
  if [[ "$lost_total" -ne 0 || "$failures" -ne 0 ]]; then
    exit 1
  fi
  exit 0
fi

acked_total=0
lost_total=0
failures=0
last_seq=0   # highest sequence number in the journal after the previous kill

for ((i = 1; i <= kills; i++)); do
  out="$dir/run-$i.out"
  "$bin/journal-crash" write "$journal" --records 100000000 "${mode[@]}" "${lie[@]}" >"$out" 2>"$dir/run-$i.err" &
  pid=$!
  # A random moment between 20 and 400 ms: after start-up, recovery and some appends.
  sleep "0.$(printf '%03d' $((RANDOM % 380 + 20)))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true

  # Only complete lines count: a line cut by the kill was not fully printed.
  acked=$(grep -E '^acked [0-9]+$' "$out" | awk '{print $2}' | sort -n || true)
  count=$(printf '%s\n' "$acked" | grep -c . || true)

  status=0
  if [[ ! -e "$journal" ]]; then
    # Killed before the writer created the journal (creation is an atomic rename,
    # so there is no half-made file). Fine only if nothing was acknowledged yet.
    state="absent"
    summary="no journal file"
    : >"$dir/dump.jsonl"
    if [[ "$count" -gt 0 || "$last_seq" -gt 0 ]]; then
      echo "kill $i: the journal is missing after $count acknowledged records" >&2
      failures=$((failures + 1))
    fi
  else
    "$bin/journal-dump" --json "$journal" >"$dir/dump.jsonl" || status=$?
    summary=$(tail -n 1 "$dir/dump.jsonl")
    state=$(printf '%s' "$summary" | { grep -o '"status":"[a-z-]*"' || true; } | cut -d'"' -f4)
    if [[ "$status" -gt 1 || ( "$state" != "clean" && "$state" != "torn-tail" ) ]]; then
      echo "kill $i: journal status '$state' (exit $status): $summary" >&2
      failures=$((failures + 1))
    fi
  fi
  { grep -o '"seq":[0-9]*' "$dir/dump.jsonl" || true; } | cut -d: -f2 | sort -n >"$dir/present"

  lost=0
  if [[ "$count" -gt 0 ]]; then
    # comm wants lexical order on both sides.
    lost=$(comm -23 <(printf '%s\n' "$acked" | sort) <(sort "$dir/present") | grep -c . || true)
    first="${acked%%$'\n'*}"   # the smallest (acked is sorted); no pipe, so no SIGPIPE under pipefail
    # A restarted writer continues the journal: its records come after what was there.
    if [[ "$first" -le "$last_seq" ]]; then
      echo "kill $i: acknowledged seq $first, but the journal already ended at $last_seq" >&2
      failures=$((failures + 1))
    fi
  fi
  if [[ -s "$dir/present" ]]; then
    # The journal itself must be gapless from 1 (the reader refuses gaps; check anyway).
    n=$(wc -l <"$dir/present")
    top=$(tail -n 1 "$dir/present")
    if [[ "$n" -ne "$top" ]]; then
      echo "kill $i: $n records but the last sequence number is $top" >&2
      failures=$((failures + 1))
    fi
    last_seq=$top
  fi
  acked_total=$((acked_total + count))
  lost_total=$((lost_total + lost))
  echo "kill $i: acknowledged $count, lost $lost, journal $state, records $(wc -l <"$dir/present")"
done

echo "crash test${mode:+ (${mode[*]})}${lie:+ (negative control: the writer lies)}: kills $kills, records acknowledged $acked_total, records lost $lost_total, failed checks $failures"
if [[ ${#lie[@]} -gt 0 ]]; then
  if [[ "$lost_total" -gt 0 ]]; then
    echo "negative control: the lying writer was caught"
    exit 0
  fi
  echo "negative control: the lying writer was NOT caught; the crash test cannot fail" >&2
  exit 1
fi
if [[ "$lost_total" -ne 0 || "$failures" -ne 0 ]]; then
  exit 1
fi

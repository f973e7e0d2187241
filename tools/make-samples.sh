#!/usr/bin/env bash
# Regenerates journals/samples/ and the expected journal-dump outputs the tests
# compare against (Tests/JournalToolsTests/Expected/). With --golden it also
# rewrites journals/golden/: do that only while a format version is being
# defined; afterwards its golden files are fixed and every later version must
# read them. Without it a golden file is only added when it is missing.
#
#   tools/make-samples.sh [--golden]
#
# SWIFT_SCRATCH_PATH, when set, is passed to `swift build --scratch-path`.
set -euo pipefail
usage() { echo "usage: $0 [--golden]"; }
golden=0
for argument in "$@"; do
  case "$argument" in
    -h|--help) usage; exit 0 ;;
    --golden) golden=1 ;;
    *) echo "$0: unknown argument $argument" >&2; usage >&2; exit 64 ;;
  esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scratch=()
if [[ -n "${SWIFT_SCRATCH_PATH:-}" ]]; then scratch=(--scratch-path "$SWIFT_SCRATCH_PATH"); fi
swift build "${scratch[@]}" --product journal-crash >/dev/null
swift build "${scratch[@]}" --product journal-dump >/dev/null
bin="$(swift build "${scratch[@]}" --show-bin-path)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$bin/journal-crash" samples "$tmp"
cp "$tmp"/samples/*.journal journals/samples/
names=(samples/healthy samples/torn-tail samples/corrupt-middle samples/store samples/store-checkpoint
       samples/reserved-field samples/unknown-type samples/power-cut-batch samples/embedded-frame
       samples/flipped-bit-last samples/damaged-header)
# A golden file is added once, when its version is defined, and never rewritten
# (except with --golden, while that version is still being defined).
for g in "$tmp"/golden/*.journal; do
  if [[ $golden -eq 1 || ! -e "journals/golden/$(basename "$g")" ]]; then
    cp "$g" journals/golden/
  fi
done
goldens=(v1-all-types v1-continued v1.1-conflicts v1.1-continued v2-all-types v2-conflicts v2-continued)
goldens+=(v2.1-typed-values)
goldens+=(v2.1-transactions)
goldens+=(v2.3-model-versions)
goldens+=(v2.4-server-identity)
goldens+=(v2.5-shared-spaces v2.5-shared-spaces-continued)
goldens+=(v2.6-attachments)
# What the current reader makes of the golden files; a diff here on a later
# version means it reads an older file differently: look before committing.
for g in "${goldens[@]}"; do
  "$bin/journal-dump" --json "journals/golden/$g.journal" >"journals/golden/$g.dump.jsonl" || true
done

expected=Tests/JournalToolsTests/Expected
: >"$expected/exit-codes.txt"
for p in "${names[@]}" "${goldens[@]/#/golden/}"; do
  n="$(basename "$p")"
  f="journals/$p.journal"
  modes=(text verify)
  [[ "$p" == samples/* ]] && modes=(text json verify state state-json)
  [[ "$p" == golden/v1.1-* || "$p" == golden/v2-conflicts || "$p" == golden/v2-continued ]] && modes=(text verify state state-json)
  [[ "$p" == golden/v2.1-typed-values ]] && modes=(text verify state state-json)
  [[ "$p" == golden/v2.1-transactions ]] && modes=(text json verify state state-json)
  [[ "$p" == golden/v2.3-model-versions ]] && modes=(text json verify state state-json)
  [[ "$p" == golden/v2.4-server-identity ]] && modes=(text json verify state state-json)
  [[ "$p" == golden/v2.5-* ]] && modes=(text json verify state state-json)
  [[ "$p" == golden/v2.6-* ]] && modes=(text json verify state state-json)
  for mode in "${modes[@]}"; do
    case "$mode" in
      text) args=("$f"); out="$expected/$n.txt" ;;
      json) args=(--json "$f"); out="$expected/$n.jsonl" ;;
      verify) args=(--verify "$f"); out="$expected/$n.verify.txt" ;;
      state) args=(--state "$f"); out="$expected/$n.state.txt" ;;
      state-json) args=(--state --json "$f"); out="$expected/$n.state.jsonl" ;;
    esac
    status=0
    "$bin/journal-dump" "${args[@]}" >"$out" || status=$?
    echo "$n $mode $status" >>"$expected/exit-codes.txt"
  done
done
echo "samples and expected outputs written; review them with git diff before committing"

#!/usr/bin/env bash
# Prints the names of the tests a Swift Testing log shows as started and not
# yet passed, failed or skipped: the ones to look at when a run hangs.
# Usage: tools/unfinished-tests.sh LOG
set -euo pipefail
log=${1:?usage: tools/unfinished-tests.sh LOG}
awk '
  /^[^ ]+ Test "/ {
    line = $0
    sub(/^[^ ]+ Test "/, "", line)
    name = line
    sub(/" (started|passed|failed|skipped|with [0-9]+ test case).*$/, "", name)
    if (line ~ /^.*" started\.$/) { open[name] = 1; order[++n] = name }
    else if (line ~ /" (passed|failed|skipped|with [0-9]+ test case)/) { delete open[name] }
  }
  END { for (i = 1; i <= n; i++) if (order[i] in open) { print order[i]; delete open[order[i]] } }
' "$log"

#!/usr/bin/env bash
# Builds every ```swift block of README.md and of the DocC catalog
# (Sources/SyncJournal/SyncJournal.docc/**/*.md), each as its own executable
# in a scratch package under .build/snippets that depends on this package by
# path, then runs each one in a fresh empty directory and checks the output
# its comments state: an example an app developer copies compiles, runs and
# prints what it says, as written.
# A block that does not compile (or warns), fails, hangs or prints something
# else fails the run, named by its file and line.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: tools/check-snippets.sh [--list] [--compile-only] [--only TEXT] [--timeout SECONDS] [--help]

Extracts every ```swift block from README.md and from
Sources/SyncJournal/SyncJournal.docc/**/*.md and builds each one as the
main.swift of its own executable (top-level code and await are allowed;
every block brings its own imports). A block links SyncJournal and those
of SyncJournalTesting and SyncJournalHTTP it imports.

Then it runs each block, one at a time, in a new empty temporary directory
(its working directory), with a time limit. A block passes when it exits 0
within the limit and its standard output holds, in order, the lines its
comments promise. Comments the check reads:

  // prints: TEXT          a line the block prints, exactly (trailing spaces
                           aside); … in TEXT stands for any text (an id, a
                           time). Several such comments must appear in the
                           output in the order they are written.
  // needs: sync-server    sync-server runs in development mode on
                           127.0.0.1:8787 (as `swift run sync-server` starts
                           it) with a new database while the block runs; a
                           reason may follow on the same line.
  // compile only: REASON  the block is built but not run.

  --list            print the blocks found (file:line and how each is
                    checked) and build nothing
  --compile-only    build every block, run none
  --only TEXT       build and run only the blocks whose file:line contains
                    TEXT (for example GettingStarted.md or README.md:27)
  --timeout SECONDS the time limit of one block's run (default 60)
  --help            print this help

Exit status: 0 every block compiles without warnings and runs as written;
1 a block does not (its file and line are printed); 64 usage error.
EOF
}

list_only=false
compile_only=false
only=""
time_limit=60
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --list) list_only=true ;;
    --compile-only) compile_only=true ;;
    --only)
      [ $# -ge 2 ] || { echo "check-snippets: --only needs a value" >&2; usage >&2; exit 64; }
      only=$2; shift ;;
    --timeout)
      [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || { echo "check-snippets: --timeout needs a whole number of seconds" >&2; usage >&2; exit 64; }
      time_limit=$2; shift ;;
    *) echo "check-snippets: unknown argument: $1" >&2; usage >&2; exit 64 ;;
  esac
  shift
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scratch="$root/.build/snippets"
map="$scratch/blocks.txt"

documents=(README.md)
if [ -d Sources/SyncJournal/SyncJournal.docc ]; then
  while IFS= read -r file; do documents+=("$file"); done \
    < <(find Sources/SyncJournal/SyncJournal.docc -name '*.md' | LC_ALL=C sort)
fi

# The blocks are extracted beside the scratch package's sources, and only the
# files that changed replace theirs, so a second run rebuilds only those.
extracted="$scratch/extracted"
rm -rf "$extracted"
mkdir -p "$extracted" "$scratch/Sources"
: > "$map"

# One directory per block: Sources/snippet_N/main.swift. The map holds
# "snippet_N FILE LINE", LINE being the line of the block's first code line.
count=0
for document in "${documents[@]}"; do
  count=$(awk -v document="$document" -v sources="$extracted" -v map="$map" -v count="$count" '
    function flush() { close(out) }
    /^[[:space:]]*```swift[[:space:]]*$/ && !inside {
      inside = 1; count++
      name = "snippet_" count
      system("mkdir -p \"" sources "/" name "\"")
      out = sources "/" name "/main.swift"
      printf "" > out
      print name, document, NR + 1 >> map
      next
    }
    /^[[:space:]]*```[[:space:]]*$/ && inside { inside = 0; flush(); next }
    inside { print >> out }
    END {
      if (inside) { printf "%s:%d: error: unterminated ```swift block\n", document, NR > "/dev/stderr"; exit 1 }
      print count
    }
  ' "$document")
done

if [ "$count" -eq 0 ]; then echo "check-snippets: no swift blocks found"; exit 0; fi

# --only keeps the blocks whose file:line contains the text.
if [ -n "$only" ]; then
  awk -v only="$only" 'index($2 ":" $3, only) > 0' "$map" > "$map.only"
  mv "$map.only" "$map"
  count=$(wc -l < "$map" | tr -d ' ')
  if [ "$count" -eq 0 ]; then echo "check-snippets: no block matches --only $only" >&2; exit 1; fi
fi

# Sources/snippet_N/main.swift for each block kept, touched only when it changed.
for directory in "$scratch"/Sources/*/; do
  name=$(basename "$directory")
  if ! awk -v name="$name" '$1 == name { found = 1 } END { exit !found }' "$map"; then rm -rf "$directory"; fi
done
while read -r name _ _; do
  mkdir -p "$scratch/Sources/$name"
  if ! cmp -s "$extracted/$name/main.swift" "$scratch/Sources/$name/main.swift"; then
    cp "$extracted/$name/main.swift" "$scratch/Sources/$name/main.swift"
  fi
done < "$map"

# How a block is checked: "compile only: REASON", "sync-server" or "run".
how() {
  local source="$scratch/Sources/$1/main.swift"
  local reason
  reason=$(sed -n 's|^.*//[[:space:]]*compile only:[[:space:]]*||p' "$source" | head -n 1)
  if [ -n "$reason" ]; then echo "compile only: $reason"
  elif grep -qE '//[[:space:]]*needs:[[:space:]]*sync-server([[:space:]]|$)' "$source"; then echo "sync-server"
  else echo "run"; fi
}

if $list_only; then
  while read -r name file line; do
    echo "$file:$line: $(how "$name")"
  done < "$map"
  exit 0
fi

# The dependency's identity is its directory's name.
identity=$(basename "$root" | tr '[:upper:]' '[:lower:]')
{
  echo '// swift-tools-version:6.0'
  echo '// Generated by tools/check-snippets.sh: one executable per documentation block.'
  echo 'import PackageDescription'
  echo ''
  echo 'func products(_ names: String...) -> [Target.Dependency] {'
  echo "    names.map { .product(name: \$0, package: \"$identity\") }"
  echo '}'
  echo ''
  echo 'let package = Package('
  echo '    name: "SyncJournalSnippets",'
  echo '    platforms: [.macOS(.v15)],'
  echo "    dependencies: [.package(path: \"$root\")],"
  echo '    targets: ['
  while read -r name _ _; do
    # Each block links only the products it imports (SyncJournal always).
    used='"SyncJournal"'
    for product in SyncJournalTesting SyncJournalHTTP; do
      if grep -qE "^[[:space:]]*import[[:space:]]+$product\b" "$scratch/Sources/$name/main.swift"; then used="$used, \"$product\""; fi
    done
    echo "        .executableTarget(name: \"$name\", dependencies: products($used), path: \"Sources/$name\"),"
  done < "$map"
  echo '    ]'
  echo ')'
} > "$scratch/Package.swift.new"
if cmp -s "$scratch/Package.swift.new" "$scratch/Package.swift"; then rm "$scratch/Package.swift.new"
else mv "$scratch/Package.swift.new" "$scratch/Package.swift"; fi

echo "check-snippets: building $count blocks from ${#documents[@]} files"
log="$scratch/build.log"
status=0
build_started=$SECONDS
swift build --package-path "$scratch" >"$log" 2>&1 || status=$?

# Compiler diagnostics in a block, translated to the document's file and line.
problems=$(awk -v scratch="$scratch/Sources/" '
  NR == FNR { file[$1] = $2; start[$1] = $3; next }
  index($0, scratch) == 1 && ($0 ~ /: error: / || $0 ~ /: warning: /) {
    rest = substr($0, length(scratch) + 1)
    split(rest, parts, "/")
    name = parts[1]
    split(rest, fields, ":")
    line = fields[2] + 0
    message = rest
    sub(/^[^:]*:[0-9]+:[0-9]+: /, "", message)
    key = file[name] ":" (start[name] + line - 1) ": " message
    if (!(key in seen)) { seen[key] = 1; print key }
  }
' "$map" "$log")

if [ -n "$problems" ]; then
  echo "$problems"
  echo "check-snippets: FAILED: a documentation block does not compile cleanly (full log: $log)"
  exit 1
fi
if [ "$status" -ne 0 ]; then
  tail -n 40 "$log"
  echo "check-snippets: FAILED: swift build exited $status (full log: $log)"
  exit 1
fi
echo "check-snippets: all $count blocks compile ($((SECONDS - build_started)) s)"
if $compile_only; then exit 0; fi

# ---- Running each block ----

bin=$(swift build --package-path "$scratch" --show-bin-path)
runs="$scratch/runs"
rm -rf "$runs"
mkdir -p "$runs"

server_bin=""
needs_server=false
while read -r name _ _; do
  if [ "$(how "$name")" = "sync-server" ]; then needs_server=true; fi
done < "$map"
if $needs_server; then
  echo "check-snippets: building sync-server for the blocks that need it"
  swift build --product sync-server >"$scratch/sync-server-build.log" 2>&1 \
    || { tail -n 40 "$scratch/sync-server-build.log"; echo "check-snippets: FAILED: sync-server does not build"; exit 1; }
  server_bin="$(swift build --show-bin-path)/sync-server"
fi

server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap stop_server EXIT

# Starts sync-server as `swift run sync-server` does (development mode,
# 127.0.0.1:8787) on a new database in $1; returns once it listens.
start_server() {
  local directory=$1
  if (exec 3<>/dev/tcp/127.0.0.1/8787) 2>/dev/null; then
    echo "check-snippets: something already listens on 127.0.0.1:8787; stop it (a sync-server of your own?) and run again"
    return 1
  fi
  : > "$directory/server.log"
  "$server_bin" --port 8787 --db "$directory/sync-server.sqlite" >>"$directory/server.log" 2>&1 &
  server_pid=$!
  local tries=0
  until grep -q 'listening on http://127.0.0.1:8787' "$directory/server.log"; do
    if ! kill -0 "$server_pid" 2>/dev/null || [ "$tries" -ge 300 ]; then
      cat "$directory/server.log"
      echo "check-snippets: sync-server did not start"
      return 1
    fi
    tries=$((tries + 1))
    sleep 0.1
  done
}

# Checks that the lines promised by `// prints:` comments (file $1, their
# block starting at line $2 of document $3) appear in order in output $4.
# Prints the first one missing as DOCUMENT:LINE: and returns 1.
check_output() {
  awk -v document="$3" -v start="$2" '
    # Whether `line` matches `pattern`, in which … stands for any text.
    function matches(pattern, line,    pieces, n, i, at, found) {
      n = split(pattern, pieces, "…")
      if (n <= 1) return pattern == line
      if (substr(line, 1, length(pieces[1])) != pieces[1]) return 0
      at = length(pieces[1]) + 1
      for (i = 2; i < n; i++) {
        found = index(substr(line, at), pieces[i])
        if (found == 0) return 0
        at += found - 1 + length(pieces[i])
      }
      if (length(line) - at + 1 < length(pieces[n])) return 0
      return substr(line, length(line) - length(pieces[n]) + 1) == pieces[n]
    }
    function trim(text) { sub(/[[:space:]]+$/, "", text); return text }
    NR == FNR {
      if (match($0, /\/\/[[:space:]]*prints:[[:space:]]?/)) {
        expected[++wanted] = trim(substr($0, RSTART + RLENGTH))
        where[wanted] = start + FNR - 1
      }
      next
    }
    next_wanted < wanted && matches(expected[next_wanted + 1], trim($0)) { next_wanted++ }
    BEGIN { next_wanted = 0 }
    END {
      if (next_wanted < wanted) {
        printf "%s:%d: the output has no line \"%s\" (after the lines promised before it)\n", document, where[next_wanted + 1], expected[next_wanted + 1]
        exit 1
      }
    }
  ' "$1" "$4"
}

# Line-buffered standard output, so a block stopped at the time limit still
# shows what it printed.
line_buffered=()
if command -v stdbuf >/dev/null; then line_buffered=(stdbuf -oL); fi

failures=0
ran=0
skipped=0
run_started=$SECONDS
while read -r name file line; do
  mode=$(how "$name")
  if [[ $mode == compile\ only:* ]]; then
    printf '  %-60s %s\n' "$file:$line" "$mode"
    skipped=$((skipped + 1))
    continue
  fi
  work=$(mktemp -d "${TMPDIR:-/tmp}/snippet.XXXXXX")
  out="$runs/$name.out"
  err="$runs/$name.err"
  if [ "$mode" = "sync-server" ]; then
    server_dir="$runs/$name.server"
    mkdir -p "$server_dir"
    if ! start_server "$server_dir"; then failures=$((failures + 1)); rm -rf "$work"; continue; fi
  fi
  started=$(date +%s%N)
  code=0
  (cd "$work" && timeout -k 5 "$time_limit" "${line_buffered[@]}" "$bin/$name" </dev/null >"$out" 2>"$err") || code=$?
  elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
  stop_server
  ran=$((ran + 1))
  problem=""
  if [ "$code" -eq 124 ] || [ "$code" -eq 137 ]; then
    problem="$file:$line: still running after $time_limit s; stopped"
  elif [ "$code" -ne 0 ]; then
    problem="$file:$line: exited with status $code"
  elif ! problem=$(check_output "$scratch/Sources/$name/main.swift" "$line" "$file" "$out"); then
    :
  else
    problem=""
  fi
  if [ -n "$problem" ]; then
    failures=$((failures + 1))
    echo "$problem"
    echo "    working directory: $work"
    echo "    standard output:"; sed 's/^/      /' "$out"
    if [ -s "$err" ]; then
      echo "    standard error (first 20 lines of $err):"; head -n 20 "$err" | sed 's/^/      /'
    fi
    if [ "$mode" = "sync-server" ]; then echo "    sync-server log: $runs/$name.server/server.log"; fi
  else
    printf '  %-60s ok (%d.%03d s)\n' "$file:$line" $((elapsed_ms / 1000)) $((elapsed_ms % 1000))
    rm -rf "$work"
  fi
done < "$map"

if [ "$failures" -gt 0 ]; then
  echo "check-snippets: FAILED: $failures of $ran blocks run do not run as written ($skipped compile only)"
  exit 1
fi
echo "check-snippets: all $ran blocks run as written in $((SECONDS - run_started)) s ($skipped compile only)"

#!/usr/bin/env bash
# Compiles Sources/CSyncJournalCRC/crc32c.c for every architecture and
# system it has a branch for (x86-64 and arm64, Linux and Apple's systems),
# with the toolchain's clang, warnings as errors. No Apple SDK is needed: the
# few system headers the file includes are replaced by stand-ins that declare
# what it uses with the platforms' prototypes. A Linux machine thereby
# checks that the Apple branches compile, that their CRC builtins are
# enabled by the target attribute, and which branch each target takes.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tools/check-crc-targets.sh [--help]

Compiles the hardware CRC-32C file to object code for x86_64 and arm64
Linux, arm64 macOS, iOS, tvOS, visionOS and arm64_32 watchOS (and riscv64
Linux, for the branch without an instruction), and prints
for each target whether it uses the instruction without a run-time check
(the target has it), after a run-time check, or never.

Exit status: 0 every target compiles without warnings; 1 one does not;
64 usage error.
USAGE
}

case "${1:-}" in
  --help|-h) usage; exit 0 ;;
  "") ;;
  *) echo "check-crc-targets: unknown argument: $1" >&2; usage >&2; exit 64 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
source_file="$root/Sources/CSyncJournalCRC/crc32c.c"
include="$root/Sources/CSyncJournalCRC/include"
# The clang of the Swift toolchain, the one SwiftPM compiles C targets with.
clang="$(dirname "$(readlink -f "$(command -v swift)")")/clang"
if [ ! -x "$clang" ]; then echo "check-crc-targets: no clang beside swift ($clang)"; exit 1; fi

# Stand-ins for the system headers, with the platforms' declarations.
sysroot=$(mktemp -d)
trap 'rm -rf "$sysroot"' EXIT
mkdir -p "$sysroot/usr/include/sys"
cat > "$sysroot/usr/include/string.h" <<'EOF'
#include <stddef.h>
void *memcpy(void *destination, const void *source, size_t count);
int strcmp(const char *a, const char *b);
EOF
cat > "$sysroot/usr/include/stdlib.h" <<'EOF'
char *getenv(const char *name);
EOF
cat > "$sysroot/usr/include/sys/types.h" <<'EOF'
#include <stddef.h>
EOF
cat > "$sysroot/usr/include/sys/sysctl.h" <<'EOF'
#include <stddef.h>
int sysctlbyname(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
EOF
cat > "$sysroot/usr/include/sys/auxv.h" <<'EOF'
#define AT_HWCAP 16
unsigned long getauxval(unsigned long type);
EOF

failed=0
for target in x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu \
              x86_64-apple-macos14 arm64-apple-macos14 arm64-apple-ios17 arm64-apple-tvos17 \
              arm64-apple-xros1 arm64_32-apple-watchos10 riscv64-unknown-linux-gnu; do
  flags=(-target "$target" -isysroot "$sysroot" --sysroot="$sysroot" -nostdlibinc -isystem "$sysroot/usr/include"
         -I "$include" -O2 -Wall -Wextra -Werror -std=c11)
  if ! "$clang" "${flags[@]}" -c "$source_file" -o /dev/null; then
    echo "check-crc-targets: $target: does not compile"
    failed=1
    continue
  fi
  macros=$("$clang" "${flags[@]}" -dM -E "$source_file")
  # Which branch the target takes, read from the object's symbols.
  symbols=$("$clang" "${flags[@]}" -S -o - "$source_file")
  if ! grep -q 'crc32c[bdwh]\|crc32q\|crc32b' <<<"$symbols"; then
    path="never (portable code only)"
  elif grep -q '__ARM_FEATURE_CRC32 1\|__SSE4_2__ 1' <<<"$macros"; then
    path="the instruction, no run-time check needed"
  elif grep -q 'sysctlbyname' <<<"$symbols"; then
    path="the instruction after sysctlbyname(\"hw.optional.armv8_crc32\")"
  elif grep -q 'getauxval' <<<"$symbols"; then
    path="the instruction after getauxval(AT_HWCAP)"
  else
    path="the instruction after CPUID"
  fi
  printf '  %-28s %s\n' "$target" "$path"
done

if [ "$failed" -ne 0 ]; then echo "check-crc-targets: FAILED"; exit 1; fi
echo "check-crc-targets: every target compiles"

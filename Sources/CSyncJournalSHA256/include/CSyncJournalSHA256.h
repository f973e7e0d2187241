#ifndef CSYNCJOURNALSHA256_H
#define CSYNCJOURNALSHA256_H

#include <stddef.h>
#include <stdint.h>

/// Returns 1 when SHA-256 should use the CPU's SHA instructions (x86-64
/// SHA extensions): the CPU has them and the environment variable
/// `SYNCJOURNAL_SHA256` is not `software` (which forces the portable Swift
/// code, to test it or compare with it on any CPU). Asked once, at first use.
int sj_sha256_hw_available(void);

/// Feeds `blocks` whole 64-byte blocks at `bytes` into `state`, the eight
/// working words a..h in host order, with the CPU's instructions. Only
/// call when `sj_sha256_hw_available()` returned 1.
void sj_sha256_hw_blocks(uint32_t state[8], const void *bytes, size_t blocks);

#endif

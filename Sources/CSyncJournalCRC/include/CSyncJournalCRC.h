#ifndef CSYNCJOURNALCRC_H
#define CSYNCJOURNALCRC_H

#include <stddef.h>
#include <stdint.h>

/// Returns 1 when this CPU has a CRC-32C instruction that
/// `sj_crc32c_hw_update` can use, 0 otherwise. Checked once, at run time.
int sj_crc32c_hw_available(void);

/// Continues a CRC-32C over `length` bytes with the CPU's instruction.
/// `crc` is the running, non-inverted register (start with 0xFFFFFFFF and
/// invert the result). Only call when `sj_crc32c_hw_available()` returned 1.
uint32_t sj_crc32c_hw_update(uint32_t crc, const void *bytes, size_t length);

#endif

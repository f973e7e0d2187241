#ifndef CSYNCJOURNALCRC_H
#define CSYNCJOURNALCRC_H

#include <stddef.h>
#include <stdint.h>

/// Returns 1 when this CPU has a CRC-32C instruction that
/// `sj_crc32c_hw_update` can use, 0 otherwise, whatever the environment says.
int sj_crc32c_hw_present(void);

/// Returns 1 when checksums should use the instruction: the CPU has it and
/// the environment variable `SYNCJOURNAL_CRC32C` is not `software` (which
/// forces the portable code, to test it or compare with it on any CPU).
/// The Swift side asks once, at first use.
int sj_crc32c_hw_available(void);

/// Returns 1 when `setting` (the value of `SYNCJOURNAL_CRC32C`, or NULL when
/// it is not set) asks for the portable code, 0 otherwise.
int sj_crc32c_software_requested(const char *setting);

/// Continues a CRC-32C over `length` bytes with the CPU's instruction.
/// `crc` is the running, non-inverted register (start with 0xFFFFFFFF and
/// invert the result). Only call when `sj_crc32c_hw_available()` returned 1.
uint32_t sj_crc32c_hw_update(uint32_t crc, const void *bytes, size_t length);

#endif

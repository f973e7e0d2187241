// Hardware CRC-32C. The instruction is enabled per function with a target
// attribute, so the package needs no compiler flags and still runs on CPUs
// without it (the caller checks sj_crc32c_hw_available first).
//   x86-64:        SSE4.2, checked with CPUID.
//   arm64 Linux:   the ARMv8 CRC extension, checked in the auxiliary vector.
//   arm64 Darwin:  the same extension; where the compilation target has it
//                  (arm64 macOS, visionOS, watchOS) no check is needed; on iOS
//                  and tvOS, whose default target CPU is the A7, the kernel
//                  answers sysctlbyname("hw.optional.armv8_crc32").
//                  tools/check-crc-targets.sh shows which target takes which.
// Anything else: no instruction, and the Swift table-driven code runs.
#include "CSyncJournalCRC.h"
#include <stdlib.h>
#include <string.h>

int sj_crc32c_software_requested(const char *setting) {
    return setting != NULL && strcmp(setting, "software") == 0;
}

int sj_crc32c_hw_available(void) {
    if (sj_crc32c_software_requested(getenv("SYNCJOURNAL_CRC32C"))) return 0;
    return sj_crc32c_hw_present();
}

#if defined(__x86_64__)
#include <cpuid.h>

int sj_crc32c_hw_present(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_SSE4_2) != 0;
}

__attribute__((target("sse4.2")))
uint32_t sj_crc32c_hw_update(uint32_t crc, const void *bytes, size_t length) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint64_t c = crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8); // unaligned-safe load
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (length > 0) {
        c32 = __builtin_ia32_crc32qi(c32, *p);
        p++;
        length--;
    }
    return c32;
}

#elif defined(__aarch64__) && (defined(__linux__) || defined(__APPLE__))
#include <arm_acle.h>

#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif

int sj_crc32c_hw_present(void) {
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
}

#define SJ_CRC_TARGET "+crc"
#else
#include <sys/types.h>
#include <sys/sysctl.h>

int sj_crc32c_hw_present(void) {
#if defined(__ARM_FEATURE_CRC32)
    return 1; // the compilation target itself has the instruction
#else
    int present = 0;
    size_t size = sizeof(present);
    if (sysctlbyname("hw.optional.armv8_crc32", &present, &size, NULL, 0) != 0) return 0;
    return present != 0;
#endif
}

// "crc" rather than "+crc": older Apple clang reads only bare feature names here.
#define SJ_CRC_TARGET "crc"
#endif

// One loop for both systems: only the run-time check differs.
__attribute__((target(SJ_CRC_TARGET)))
uint32_t sj_crc32c_hw_update(uint32_t crc, const void *bytes, size_t length) {
    const unsigned char *p = (const unsigned char *)bytes;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = __crc32cd(crc, word);
        p += 8;
        length -= 8;
    }
    while (length > 0) {
        crc = __crc32cb(crc, *p);
        p++;
        length--;
    }
    return crc;
}

#else

int sj_crc32c_hw_present(void) { return 0; }

uint32_t sj_crc32c_hw_update(uint32_t crc, const void *bytes, size_t length) {
    (void)bytes;
    (void)length;
    return crc; // never called: the Swift fallback is used instead
}

#endif

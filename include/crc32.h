/* SPDX-License-Identifier: MIT */
/*
 * CRC-32 as zlib, gzip and IEEE 802.3 compute it (reflected polynomial
 * 0xedb88320): the checksum .gnu_debuglink stores for its debug file, which
 * gdb and libdw check before they trust the file.
 */
#ifndef PTC_CRC32_H
#define PTC_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continue @crc (0 to start) over @len bytes of @buf; returns the CRC so far. */
uint32_t crc32_update(uint32_t crc, const void *buf, size_t len);

/* The CRC-32 of everything in the file open as @fd (read with pread). 0 or -errno. */
int crc32_fd(int fd, uint32_t *crc);

#endif

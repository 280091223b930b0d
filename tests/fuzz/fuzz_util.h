/* fuzz_util: what the libFuzzer targets of tests/fuzz share. The parsers under test take
 * paths, so an input becomes a file: an anonymous memfd named /proc/self/fd/N (no disk,
 * nothing left behind), or a file in a per-process scratch folder when SQLite must open
 * it (it creates -wal/-journal sidecars beside the file). */
#ifndef OCB_FUZZ_UTIL_H
#define OCB_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Writes data[0..n) to a fresh memfd; *path gets "/proc/self/fd/N" (buffer >= 32 bytes).
 * Returns the fd (the caller closes it), or -1 (then the input is skipped). */
int fuzz_memfile(const uint8_t *data, size_t n, char *path);

/* A scratch folder for this process, created once (/dev/shm/ocb-fuzz-PID, else /tmp),
 * removed at exit. */
const char *fuzz_scratch(void);

/* Writes data[0..n) to `path`, replacing it. 0 or -1. */
int fuzz_write_file(const char *path, const void *data, size_t n);

/* Removes `path` and its SQLite sidecars (-wal, -shm, -journal). */
void fuzz_unlink_db(const char *path);

/* With OCB_FUZZ_VERBOSE set, prints rc and ocb_lasterr() on stderr (to see which path a
 * seed takes); returns rc. */
int fuzz_note(const char *what, int rc);

#endif

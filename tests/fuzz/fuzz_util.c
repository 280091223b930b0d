/* fuzz_util: input-to-file helpers of the fuzz targets (fuzz_util.h). */
#define _GNU_SOURCE
#include "fuzz_util.h"

#include "../../common/ocb_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int fuzz_memfile(const uint8_t *data, size_t n, char *path)
{
	int fd = memfd_create("ocb-fuzz", 0);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < n) {
		ssize_t w = write(fd, data + off, n - off);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	snprintf(path, 32, "/proc/self/fd/%d", fd);
	return fd;
}

static char scratch[64];

static void scratch_remove(void)
{
	char cmd[96];

	if (!scratch[0])
		return;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz: could not remove %s\n", scratch);
}

const char *fuzz_scratch(void)
{
	if (!scratch[0]) {
		/* tmpfs when there is one: SQLite syncs the merge and import stores */
		snprintf(scratch, sizeof scratch, "%s/ocb-fuzz-%d",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
		if (mkdir(scratch, 0700) != 0) {
			perror(scratch);
			abort();
		}
		atexit(scratch_remove);
	}
	return scratch;
}

int fuzz_write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	int rc = 0;

	if (!f)
		return -1;
	if (n && fwrite(data, 1, n, f) != n)
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

void fuzz_unlink_db(const char *path)
{
	static const char *const side[] = {"", "-wal", "-shm", "-journal"};
	char p[512];

	for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
		snprintf(p, sizeof p, "%s%s", path, side[i]);
		unlink(p);
	}
}

int fuzz_note(const char *what, int rc)
{
	if (getenv("OCB_FUZZ_VERBOSE"))
		fprintf(stderr, "%s: %d %s\n", what, rc, rc ? ocb_lasterr() : "ok");
	return rc;
}

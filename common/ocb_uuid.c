/* ocb_uuid: RFC 4122 version-4 UUIDs (ocb_uuid.h). */
#include "ocb_uuid.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ocb_time.h"

void ocb_uuid_v4(char out[37])
{
	unsigned char b[16] = {0};
	int fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0 || read(fd, b, sizeof b) != (ssize_t)sizeof b) {
		uint64_t t = ocb_now_ns() ^ ((uint64_t)getpid() << 32);
		memcpy(b, &t, sizeof t);
	}
	if (fd >= 0)
		close(fd);
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* variant 10xx */
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
}

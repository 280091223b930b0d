#include "ocb_cpu.h"

#include <stdlib.h>
#include <unistd.h>

static int avx2_cached = -1;

int ocb_cpu_avx2(void)
{
	if (avx2_cached < 0) {
		const char *force = getenv("OCB_FORCE_SCALAR");
		__builtin_cpu_init();
		avx2_cached = !(force && *force && *force != '0') &&
			      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	}
	return avx2_cached;
}

void ocb_cpu_reset(void)
{
	avx2_cached = -1;
}

int ocb_cpu_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

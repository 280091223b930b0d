#include "ocb_cpu.h"

#include <cpuid.h>
#include <stdlib.h>
#include <unistd.h>

static int avx2_cached = -1, avx512f_cached = -1;

static int env_set(const char *name)
{
	const char *v = getenv(name);
	return v && *v && *v != '0';
}

int ocb_cpu_avx2(void)
{
	if (avx2_cached < 0) {
		__builtin_cpu_init();
		avx2_cached = !env_set("OCB_FORCE_SCALAR") && __builtin_cpu_supports("avx2") &&
			      __builtin_cpu_supports("fma");
	}
	return avx2_cached;
}

/* XCR0 bits the OS must set for zmm code: SSE (1), AVX (2), opmask (5), ZMM_Hi256 (6),
 * Hi16_ZMM (7) (Intel SDM vol. 1, 15.2 "Detection of AVX-512 Foundation"). */
#define XCR0_ZMM 0xE6u

int ocb_cpu_zmm_usable(int has_avx512f, int osxsave, uint64_t xcr0)
{
	return has_avx512f && osxsave && (xcr0 & XCR0_ZMM) == XCR0_ZMM;
}

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

int ocb_cpu_avx512f(void)
{
	if (avx512f_cached < 0) {
		unsigned a, b, c, d;
		int f = 0, osx = 0;
		if (__get_cpuid(1, &a, &b, &c, &d))
			osx = (c >> 27) & 1;
		if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
			f = (b >> 16) & 1;
		avx512f_cached = ocb_cpu_avx2() && !env_set("OCB_FORCE_AVX2") &&
				 ocb_cpu_zmm_usable(f, osx, osx ? xgetbv0() : 0);
	}
	return avx512f_cached;
}

int ocb_cpu_avxvnni(void)
{
	return ocb_cpu_avx2() && !env_set("OCB_FORCE_AVX2") && __builtin_cpu_supports("avxvnni");
}

int ocb_cpu_avx512vnni(void)
{
	return ocb_cpu_avx512f() && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vnni");
}

void ocb_cpu_reset(void)
{
	avx2_cached = -1;
	avx512f_cached = -1;
}

int ocb_cpu_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

#include "ocb_cpu.h"

#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int avx2_cached = -1, avx512f_cached = -1;

static int env_set(const char *name)
{
	const char *v = getenv(name);
	return v && *v && *v != '0';
}

/* Display family/model as Intel SDM vol. 2 (CPUID leaf 1) and AMD's CPUID spec define them:
 * the extended family is added only when the base family is 0xf, the extended model is
 * prepended for base family 6 or 0xf. */
static void fill_id(struct ocb_cpu_id *c)
{
	unsigned a = 0, b = 0, cx = 0, d = 0, max = 0;
	memset(c, 0, sizeof *c);
	if (!__get_cpuid(0, &max, &b, &cx, &d))
		return;
	memcpy(c->vendor, &b, 4), memcpy(c->vendor + 4, &d, 4), memcpy(c->vendor + 8, &cx, 4);
	__get_cpuid(1, &a, &b, &cx, &d);
	int base_fam = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
	c->family = base_fam == 0xf ? base_fam + (int)((a >> 20) & 0xff) : base_fam;
	c->model = base_fam == 0x6 || base_fam == 0xf ? (int)((a >> 12) & 0xf0) | base_model
						      : base_model;
	c->stepping = a & 0xf;
	int osxsave = (cx >> 27) & 1, fma = (cx >> 12) & 1, f16c = (cx >> 29) & 1;
	int ymm_ok = 0;
	if (osxsave) {
		uint32_t lo, hi;
		__asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		ymm_ok = (lo & 6) == 6; /* XMM and YMM state enabled by the OS */
	}
	c->fma = ymm_ok && fma;
	c->f16c = ymm_ok && f16c;
	if (max >= 7) {
		__cpuid_count(7, 0, a, b, cx, d);
		c->avx2 = ymm_ok && ((b >> 5) & 1);
	}
	unsigned ext = 0;
	__get_cpuid(0x80000000, &ext, &b, &cx, &d);
	if (ext >= 0x80000004) {
		uint32_t *p = (uint32_t *)(void *)c->brand;
		for (unsigned leaf = 0; leaf < 3; leaf++)
			__get_cpuid(0x80000002 + leaf, &p[4 * leaf], &p[4 * leaf + 1], &p[4 * leaf + 2],
				    &p[4 * leaf + 3]);
		c->brand[48] = 0;
		char *s = c->brand;
		while (*s == ' ')
			s++;
		memmove(c->brand, s, strlen(s) + 1);
		for (size_t n = strlen(c->brand); n > 0 && c->brand[n - 1] == ' '; n--)
			c->brand[n - 1] = 0;
	}
}

int ocb_cpu_parse_as(const char *s, struct ocb_cpu_id *c)
{
	const char *colon = s ? strchr(s, ':') : NULL;
	if (!colon || colon - s != 12) /* cpuid vendor strings are 12 characters */
		return -1;
	char *end;
	long fam = strtol(colon + 1, &end, 0);
	if (end == colon + 1 || *end != ':' || fam <= 0 || fam > 0x10e) /* 0xf + ext. 0xff */
		return -1;
	const char *m = end + 1;
	long model = strtol(m, &end, 0);
	if (end == m || *end || model < 0 || model > 0xff)
		return -1;
	memcpy(c->vendor, s, 12);
	c->vendor[12] = 0;
	c->family = (int)fam, c->model = (int)model;
	return 0;
}

static struct ocb_cpu_id id_cached;
static int id_done;

const char *ocb_cpu_as(void)
{
	const char *v = getenv("OCB_CPU_AS");
	return v && *v ? v : NULL;
}

const struct ocb_cpu_id *ocb_cpu_id(void)
{
	if (!id_done) { /* idempotent: concurrent first calls copy in the same bytes */
		struct ocb_cpu_id id;
		fill_id(&id);
		const char *as = ocb_cpu_as();
		if (as && ocb_cpu_parse_as(as, &id) != 0) {
			fprintf(stderr, "ocbench: OCB_CPU_AS='%s' is not VENDOR:FAMILY:MODEL "
					"(e.g. GenuineIntel:6:0xcf)\n", as);
			exit(2);
		}
		id_cached = id;
		id_done = 1;
	}
	return &id_cached;
}

/* Zen 3 (family 19h): Milan 0x00-0x0f, Vermeer 0x20-0x2f, Cezanne/Rembrandt 0x40-0x5f;
 * Zen 4 is family 19h models 0x10-0x1f and 0x60-0x7f, 0xa0-0xaf. */
int ocb_cpu_is_zen3(const struct ocb_cpu_id *c)
{
	if (strcmp(c->vendor, "AuthenticAMD") != 0 || c->family != 0x19)
		return 0;
	return c->model < 0x10 || (c->model >= 0x20 && c->model < 0x60);
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

/* AVX-VNNI: CPUID.(EAX=7,ECX=1):EAX bit 4 (Intel SDM vol. 2, CPUID); the OS ymm state is
 * ocb_cpu_avx2's check. Read directly: clang 14 (the fuzz build) does not know the
 * __builtin_cpu_supports("avxvnni") name. */
int ocb_cpu_avxvnni(void)
{
	unsigned a = 0, b, c, d;
	if (!ocb_cpu_avx2() || env_set("OCB_FORCE_AVX2"))
		return 0;
	return __get_cpuid_count(7, 1, &a, &b, &c, &d) && ((a >> 4) & 1);
}

int ocb_cpu_avx512vnni(void)
{
	return ocb_cpu_avx512f() && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

void ocb_cpu_reset(void)
{
	avx2_cached = -1;
	avx512f_cached = -1;
	id_done = 0;
}

int ocb_cpu_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

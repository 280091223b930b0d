/* ocb_cpu: run-time CPU identification and feature choice. One binary runs everywhere:
 * kernels ask here whether to take their AVX2 or AVX-512 path, and which
 * vendor/family/model they run on when the best variant differs between
 * microarchitectures (kernels/quant_repack.c). OCB_FORCE_SCALAR=1 in the environment forces
 * the plain-C paths, OCB_FORCE_AVX2=1 keeps the AVX2 paths but never the AVX-512 or
 * AVX-VNNI ones (tests use both to exercise every path on a wide machine).
 * OCB_CPU_AS=VENDOR:FAMILY:MODEL (e.g. GenuineIntel:6:0xcf) makes ocb_cpu_id() report that
 * vendor, family and model, so the kernels take that CPU's layouts and settings on this one
 * (tests of the other vendor's choices; the ISA checks still ask this CPU). Set it before
 * the process starts: the r16 GEMVs' prefetch table is settled from ocb_cpu_id() as the
 * program loads (kernels/quant_repack.c), and ocb_cpu_reset() does not settle it again. */
#ifndef OCB_CPU_H
#define OCB_CPU_H

#include <stdint.h>

/* What cpuid says about this CPU. Filled once (ocb_cpu_id()), constant afterwards. */
struct ocb_cpu_id {
	char vendor[13];  /* "GenuineIntel", "AuthenticAMD", ... ("" if cpuid is absent) */
	char brand[49];   /* processor brand string, trimmed ("" if not reported) */
	int family;       /* display family: base + extended family (AMD Zen 3 = 0x19) */
	int model;        /* display model: extended model << 4 | base model */
	int stepping;
	int avx2, fma, f16c; /* usable (OS saves the ymm state) */
	/* (instruction-set extensions beyond these: ask ocb_cpu_avx512f(), ocb_cpu_avxvnni(),
	 * ocb_cpu_avx512vnni(), which also apply the OCB_FORCE_* overrides) */
};

/* The cached identification of the CPU this process runs on (never NULL); vendor, family
 * and model as OCB_CPU_AS says when it is set (a malformed value: one line on stderr,
 * exit 2). */
const struct ocb_cpu_id *ocb_cpu_id(void);
/* OCB_CPU_AS if set and not empty, else NULL. */
const char *ocb_cpu_as(void);
/* Parse "VENDOR:FAMILY:MODEL" (a 12-character cpuid vendor, display family and model in
 * C notation: 6, 0x1a, 0xcf) into c's vendor, family and model; 0, or -1 (c unchanged). */
int ocb_cpu_parse_as(const char *s, struct ocb_cpu_id *c);
/* 1 if this is an AMD family 0x19 core with model < 0x10 or 0x20..0x5f (Zen 3). */
int ocb_cpu_is_zen3(const struct ocb_cpu_id *c);

/* 1 if the CPU has AVX2 and FMA and OCB_FORCE_SCALAR is not set. Cached after first call. */
int ocb_cpu_avx2(void);
/* 1 if ocb_cpu_avx2(), the CPU has AVX-512F, the OS saves zmm state (XCR0 bits 1, 2 and
 * 5-7) and OCB_FORCE_AVX2 is not set. Cached after first call. */
int ocb_cpu_avx512f(void);
/* 1 if ocb_cpu_avx2(), the CPU has AVX-VNNI (VEX vpdpbusd ymm) and OCB_FORCE_AVX2 is not
 * set (forced AVX2 is the plain AVX2+FMA baseline). */
int ocb_cpu_avxvnni(void);
/* 1 if ocb_cpu_avx512f() and the CPU has AVX-512BW, AVX-512VL and AVX-512 VNNI (vpdpbusd
 * zmm, and its EVEX form on ymm). */
int ocb_cpu_avx512vnni(void);
/* The AVX-512 decision from raw bits (pure; tests feed it CPUs we do not have):
 * has_avx512f = CPUID.(7,0):EBX bit 16, osxsave = CPUID.1:ECX bit 27, xcr0 = XGETBV(0)
 * (meaningful only when osxsave). 1 when zmm code may run. */
int ocb_cpu_zmm_usable(int has_avx512f, int osxsave, uint64_t xcr0);
/* Forget the cached answers (tests that flip OCB_FORCE_SCALAR / OCB_FORCE_AVX2 /
 * OCB_CPU_AS call it; ocb_cpu_id() keeps its address). */
void ocb_cpu_reset(void);
/* Number of online cores (>= 1). */
int ocb_cpu_cores(void);

#endif

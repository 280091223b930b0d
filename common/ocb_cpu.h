/* ocb_cpu: run-time CPU identification and feature choice. One binary runs everywhere:
 * kernels ask here whether to take their AVX2 path, and which vendor/family/model they
 * run on when the best variant differs between microarchitectures (kernels/quant_repack.c).
 * OCB_FORCE_SCALAR=1 in the environment forces the plain-C paths (tests use it to exercise
 * both on an AVX2 machine). */
#ifndef OCB_CPU_H
#define OCB_CPU_H

/* What cpuid says about this CPU. Filled once (ocb_cpu_id()), constant afterwards. */
struct ocb_cpu_id {
	char vendor[13];  /* "GenuineIntel", "AuthenticAMD", ... ("" if cpuid is absent) */
	char brand[49];   /* processor brand string, trimmed ("" if not reported) */
	int family;       /* display family: base + extended family (AMD Zen 3 = 0x19) */
	int model;        /* display model: extended model << 4 | base model */
	int stepping;
	int avx2, fma, f16c; /* usable (OS saves the ymm state) */
	int avx_vnni;     /* AVX-VNNI (VEX vpdpbusd on ymm), leaf 7 sub-leaf 1 eax bit 4 */
};

/* The cached identification of the CPU this process runs on (never NULL). */
const struct ocb_cpu_id *ocb_cpu_id(void);
/* 1 if this is an AMD family 0x19 core with model < 0x10 or 0x20..0x5f (Zen 3). */
int ocb_cpu_is_zen3(const struct ocb_cpu_id *c);

/* 1 if the CPU has AVX2 and FMA and OCB_FORCE_SCALAR is not set. Cached after first call. */
int ocb_cpu_avx2(void);
/* Forget the cached answer (tests that flip OCB_FORCE_SCALAR call it). */
void ocb_cpu_reset(void);
/* Number of online cores (>= 1). */
int ocb_cpu_cores(void);

#endif

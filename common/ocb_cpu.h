/* ocb_cpu: run-time CPU feature choice. One binary runs everywhere: kernels ask here
 * whether to take their AVX2 path. OCB_FORCE_SCALAR=1 in the environment forces the
 * plain-C paths (tests use it to exercise both on an AVX2 machine). */
#ifndef OCB_CPU_H
#define OCB_CPU_H

/* 1 if the CPU has AVX2 and FMA and OCB_FORCE_SCALAR is not set. Cached after first call. */
int ocb_cpu_avx2(void);
/* Forget the cached answer (tests that flip OCB_FORCE_SCALAR call it). */
void ocb_cpu_reset(void);
/* Number of online cores (>= 1). */
int ocb_cpu_cores(void);

#endif

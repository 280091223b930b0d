/* peak_fma: a compute-bound fp32 FMA loop for the roofline's compute ceiling
 * (REFERENCE.md §3, ERT style), the machine's fp32 peak: it runs the widest FMA the CPU
 * offers, chosen at run time (AVX-512F zmm when the CPU has it and the OS saves zmm
 * state, else AVX2 ymm, else plain C). Each thread keeps independent accumulators and
 * updates each with acc = acc * m + c, so the FMA pipes never wait on a previous result
 * (latency 4 x 2 ports needs >= 8 chains). AVX2: 12 ymm chains (16 ymm registers);
 * AVX-512: 16 zmm chains (32 zmm registers), twice the slack for SPR/ICX's 4-cycle
 * latency on 2 FMA ports.
 * Owns nothing: no allocation, no global state. */
#ifndef OCB_PEAK_FMA_H
#define OCB_PEAK_FMA_H

/* Independent accumulators and lanes per accumulator (one ymm register of floats). */
#define OCB_FMA_ACC 12
#define OCB_FMA_LANES 8
/* Flops of one iteration of one thread: every lane of every accumulator does one FMA. */
#define OCB_FMA_FLOPS_PER_ITER (2.0 * OCB_FMA_ACC * OCB_FMA_LANES)
/* The AVX-512 variant: 16 accumulators of one zmm register (16 floats) each. */
#define OCB_FMA512_ACC 16
#define OCB_FMA512_LANES 16
#define OCB_FMA512_FLOPS_PER_ITER (2.0 * OCB_FMA512_ACC * OCB_FMA512_LANES)

/* Runs `iters` iterations on each of `threads` OpenMP threads (threads <= 0: the OpenMP
 * default) and returns the flops done (threads x iters x ocb_peak_fma_flops_per_iter()).
 * *sink (may be NULL) receives the sum of every lane of every thread's accumulators,
 * which makes the work observable; the values stay in [0.5, 2] for any iters.
 * Dispatches to the AVX-512 variant when ocb_cpu_avx512f(), else the AVX2 one when
 * ocb_cpu_avx2(), else the plain-C _ref. */
double ocb_peak_fma(long iters, int threads, double *sink);
/* Flops of one iteration of one thread of the variant ocb_peak_fma() runs here. */
double ocb_peak_fma_flops_per_iter(void);
/* That variant's ISA and shape for method texts, e.g. "AVX-512F zmm FMA, 16 independent
 * 16-lane accumulators". Static string. */
const char *ocb_peak_fma_isa(void);
/* Plain C, same arithmetic lane by lane as the AVX2 variant (12 x 8 lanes; not fast:
 * the compiler may not vectorise it). */
double ocb_peak_fma_ref(long iters, int threads, double *sink);
/* AVX2+FMA; call only when ocb_cpu_avx2() (tests compare it with _ref). */
double ocb_peak_fma_avx2(long iters, int threads, double *sink);
/* Plain C twin of the AVX-512 variant (16 x 16 lanes). */
double ocb_peak_fma_avx512_ref(long iters, int threads, double *sink);
/* AVX-512F; call only when ocb_cpu_avx512f() (tests compare it with its _ref). */
double ocb_peak_fma_avx512(long iters, int threads, double *sink);

#endif

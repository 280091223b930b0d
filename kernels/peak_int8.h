/* peak_int8: a compute-bound int8 dot-product loop for the roofline's integer roof
 * (ceiling kind "ops_int8", GOP/s), the instructions the Q8_0/Q4_0/TQ kernels' inner
 * loops are made of (REFERENCE.md §2 "AVX2 idioms"): per step and accumulator,
 *   p16 = vpmaddubsw(a, b)     32 u8 x s8 products summed in pairs -> 16 x s16
 *   p32 = vpmaddwd(p16, 1)     pairs summed -> 8 x s32
 *   acc = vpaddd(acc, p32)     int32 accumulate (wraps mod 2^32)
 * OCB_INT8_ACC independent accumulators so that only the 1-cycle vpaddd is loop-carried
 * and the multiply ports stay busy (2 x maddubs + madd per cycle at most on Intel
 * p0/p1 and on AMD Zen; 8 chains leave slack for a 5-cycle latency).
 * The roof is the machine's int8 peak, not only our AVX2 kernels' own: on a CPU with
 * AVX-512 VNNI the dispatch runs 16 chains of vpdpbusd zmm (64 u8 x s8 products summed
 * by fours into 16 x s32 in one instruction, ~4x the AVX2 chain's products per cycle),
 * so that no kernel bound by ops_int8 (AVX2 maddubs, optional AVX-VNNI ymm vpdpbusd:
 * at most 2x the AVX2 chain) can sit above its roof; on a CPU with AVX-VNNI but not
 * AVX-512 (Alder Lake and later client cores) it runs vpdpbusd ymm chains.
 * Ops are counted as the quant kernels' work model counts them (collect/
 * bench_quant_gemv.c: 2 per multiply-accumulate): 32 products x 2 = 64 ops per
 * accumulator per step (AVX2), 128 (zmm). Owns nothing: no allocation, no global state. */
#ifndef OCB_PEAK_INT8_H
#define OCB_PEAK_INT8_H

#include <stdint.h>

#define OCB_INT8_ACC 8      /* independent int32x8 accumulators per thread */
#define OCB_INT8_BYTES 32   /* int8 products per accumulator per step (one ymm) */
/* Ops of one step of one thread: a multiply and an add per int8 product. */
#define OCB_INT8_OPS_PER_ITER (2.0 * OCB_INT8_ACC * OCB_INT8_BYTES)
/* The AVX-512 VNNI variant: 16 int32x16 accumulators, 64 products each per step. */
#define OCB_INT8_512_ACC 16
#define OCB_INT8_512_BYTES 64
#define OCB_INT8_512_OPS_PER_ITER (2.0 * OCB_INT8_512_ACC * OCB_INT8_512_BYTES)

/* Runs `iters` steps on each of `threads` OpenMP threads (threads <= 0: the OpenMP
 * default) and returns the ops done (threads x iters x OCB_INT8_OPS_PER_ITER).
 * *sink (may be NULL) receives the sum over threads, accumulators and lanes of every
 * int32 lane read as uint32: ocb_peak_int8_expect() says what it must be. Products stay
 * far from int16 saturation (|a b| <= 9), so every variant computes the same integers.
 * Dispatches to the widest variant the CPU offers: AVX-512 VNNI (vpdpbusd zmm) when
 * ocb_cpu_avx512vnni(), else AVX-VNNI (vpdpbusd ymm, the AVX2 shape) when
 * ocb_cpu_avxvnni(), else AVX2 when ocb_cpu_avx2(), else the plain-C _ref. */
double ocb_peak_int8(long iters, int threads, uint64_t *sink);
/* Ops of one step of one thread of the variant ocb_peak_int8() runs here. */
double ocb_peak_int8_ops_per_iter(void);
/* The *sink that variant must give for (iters, threads). */
uint64_t ocb_peak_int8_expected(long iters, int threads);
/* That variant's ISA and shape for method texts. Static string. */
const char *ocb_peak_int8_isa(void);
/* Plain C, the same integer arithmetic lane by lane. */
double ocb_peak_int8_ref(long iters, int threads, uint64_t *sink);
/* AVX2; call only when ocb_cpu_avx2() (tests compare it with _ref). */
double ocb_peak_int8_avx2(long iters, int threads, uint64_t *sink);
/* The *sink the AVX2 variant and _ref must give for (iters, threads), in closed form:
 * threads x sum over lanes of (init + iters x step) mod 2^32. */
uint64_t ocb_peak_int8_expect(long iters, int threads);
/* AVX-VNNI, the AVX2 variant's shape and sink; call only when ocb_cpu_avxvnni(). */
double ocb_peak_int8_avxvnni(long iters, int threads, uint64_t *sink);
/* AVX-512 VNNI (F, BW, VNNI); call only when ocb_cpu_avx512vnni(). */
double ocb_peak_int8_vnni512(long iters, int threads, uint64_t *sink);
/* Plain-C twin of the VNNI variant (16 accumulators x 16 lanes, the same integers). */
double ocb_peak_int8_vnni512_ref(long iters, int threads, uint64_t *sink);
/* The closed form of the VNNI variant's *sink. */
uint64_t ocb_peak_int8_vnni512_expect(long iters, int threads);

#endif

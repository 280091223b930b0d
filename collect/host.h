/* host: the machine fingerprint (CPU, ISA, caches, memory, OS, compiler, BLAS, PAPI)
 * and its stable id: a hash of the hardware/OS/compiler fields, the same on every run
 * on the same machine and build configuration (hostname excluded, so clones of a VM
 * image with the same hardware compare as one machine kind). */
#ifndef OCB_HOST_H
#define OCB_HOST_H

#include "../db/records.h"

/* Probes this machine into *m. Never fails: unknown fields stay "" or 0. */
void ocb_host_probe(struct ocb_machine *m);

/* Recomputes m->fingerprint from the other fields (exposed for tests). */
void ocb_host_fingerprint(struct ocb_machine *m);

/* OpenBLAS's DYNAMIC_ARCH build picks its kernels at load time from the CPU model; a
 * version that does not know a newer CPU falls back to an old core (0.3.21 on a Xeon of
 * family 6 model 207 runs "Prescott", SSE3 kernels: sgemm at ~40% of its Haswell
 * kernels). The core ocbench wants is the one of the widest vector ISA the CPU offers,
 * the ISA the fp32 FMA peak is measured with (kernels/peak_fma.h): sgemm must sit just
 * below that peak.
 * Pure: given the core OpenBLAS runs and what the CPU offers (avx2fma: AVX2 and FMA;
 * avx512: AVX-512 F/CD/BW/DQ/VL usable), the core to force with OPENBLAS_CORETYPE, or
 * NULL when the running one is right (or the CPU has no AVX2: nothing better exists):
 *   AVX-512 CPU, core not SkylakeX/Cooperlake/SapphireRapids   -> "SkylakeX"
 *   AVX2 CPU, core not one of those nor Haswell/Zen/Excavator  -> "Haswell" */
const char *ocb_host_blas_core_for(const char *core, int avx2fma, int avx512);
/* ocb_host_blas_core_for() for this CPU and the core OpenBLAS runs now. */
const char *ocb_host_blas_core_wanted(void);
/* 1 when ocb_host_blas_core_wanted() is not NULL: OpenBLAS runs a core narrower than
 * this CPU's widest vectors. */
int ocb_host_blas_fallback(void);

/* If ocb_host_blas_fallback() and OPENBLAS_CORETYPE is unset: sets OPENBLAS_CORETYPE to
 * ocb_host_blas_core_wanted() and re-executes /proc/self/exe with argv so that OpenBLAS
 * loads again with it. A value the user set is never changed.
 * Call first thing in main(), before any thread exists. Returns when no re-exec was
 * needed, or when it failed (then OpenBLAS keeps its fallback core). */
void ocb_host_blas_reexec(char **argv);

/* The state of the host when a run begins (Google Benchmark's context.load_avg and
 * mhz_per_cpu): load[3] from /proc/loadavg (1, 5, 15 min), *mhz the mean "cpu MHz" of
 * /proc/cpuinfo. NaN where the file does not say. */
void ocb_host_load_mhz(double load[3], double *mhz);

#endif

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
 * kernels). 1 when this CPU has AVX2+FMA but OpenBLAS runs a core without them. */
int ocb_host_blas_fallback(void);

/* If ocb_host_blas_fallback() and OPENBLAS_CORETYPE is unset: sets
 * OPENBLAS_CORETYPE=Haswell (OpenBLAS's AVX2+FMA kernels, the ISA ocbench's own kernels
 * use) and re-executes /proc/self/exe with argv so that OpenBLAS loads again with it.
 * Call first thing in main(), before any thread exists. Returns when no re-exec was
 * needed, or when it failed (then OpenBLAS keeps its fallback core). */
void ocb_host_blas_reexec(char **argv);

/* The state of the host when a run begins (Google Benchmark's context.load_avg and
 * mhz_per_cpu): load[3] from /proc/loadavg (1, 5, 15 min), *mhz the mean "cpu MHz" of
 * /proc/cpuinfo. NaN where the file does not say. */
void ocb_host_load_mhz(double load[3], double *mhz);

#endif

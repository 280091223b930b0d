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

#endif

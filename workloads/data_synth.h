/* data_synth: tiny synthetic datasets for unit tests that must not need the Debian data
 * packages. Deterministic in the seed. */
#ifndef OCB_DATA_SYNTH_H
#define OCB_DATA_SYNTH_H

#include <stddef.h>
#include <stdint.h>

/* Writes a separable 10-class 28x28 image set in Fashion-MNIST's file names and IDX gzip
 * format into `dir` (which must exist): train-{images-idx3,labels-idx1}-ubyte.gz with
 * ntrain examples and t10k-* with ntest, so ocb_fmnist_load(dir, ...) reads it through
 * the real loader. Each class is a fixed random prototype image plus per-example noise
 * (labels cycle through the classes in a shuffled order). Errors: those of
 * ocb_idx_write_gz, OCB_EINVAL for n <= 0, OCB_ENOMEM. */
int ocb_synth_fmnist_write(const char *dir, int ntrain, int ntest, uint64_t seed);

/* A synthetic `%`-separated corpus of nrecords records (1-4 lines of words drawn from a
 * small vocabulary with a skewed distribution, so it has structure an LM can learn).
 * *out is malloc'd (caller frees), *len its length. OCB_EINVAL, OCB_ENOMEM. */
int ocb_synth_text(uint64_t seed, size_t nrecords, unsigned char **out, size_t *len);

#endif

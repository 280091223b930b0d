/* dist_check: the MPI test program (see dist_check.c). */
#ifndef OCB_DIST_CHECK_H
#define OCB_DIST_CHECK_H

/* `dp DATA_DIR OPT GBATCH EPOCHS [LR [MAX_TRAIN]]`: trains the data-parallel MLP. */
int dist_check_dp(int rank, int nranks, int argc, char **argv);

/* `lmdp STEPS GLOBAL_BATCH`: trains the data-parallel LM on a synthetic corpus. */
int dist_check_lm_dp(int rank, int nranks, int argc, char **argv);

#endif

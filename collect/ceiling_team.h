/* ceiling_team: runs one measurement body on a team of threads that really run on
 * distinct cores, each timing itself, so that a ceiling can say what every thread
 * achieved (issue 8: a competing busy loop on one core shows as one slow thread).
 *
 * With nt > 1 threads and at least nt CPUs in the process's affinity mask, thread t is
 * pinned to the t-th allowed CPU for the duration of the call (its previous mask is
 * restored before it returns), so two threads of the team never share a core while
 * another sits idle. One thread is not pinned: the scheduler may pick the idlest CPU.
 * Owns nothing after it returns. */
#ifndef OCB_CEILING_TEAM_H
#define OCB_CEILING_TEAM_H

/* Thread t's part of the work (flops, ops or bytes) of one timed call; runs on that
 * thread alone (it may call a kernel with threads = 1). */
typedef double (*ocb_team_fn)(int t, int nt, void *arg);

/* Runs fn on nt OpenMP threads at once (all start after one barrier). *agg = total work
 * / (last end - first start), per second; rate[t] (may be NULL, else nt entries) =
 * thread t's work / its own time; cpu[t] (may be NULL) = the CPU it ended on (-1 when
 * unknown); share[t] (may be NULL) = thread t's CPU time / its own wall time, about 1
 * when it had its core to itself and 0.5 when another runnable task shared it (the
 * direct sign of a busy host, whatever the scheduler did with the intruder). *pinned
 * (may be NULL) = 1 when the threads were pinned. Fails (OCB_ERUNTIME) when OpenMP gives
 * fewer than nt threads. */
int ocb_team_run(int nt, ocb_team_fn fn, void *arg, double *agg, double *rate, int *cpu,
		 double *share, int *pinned);

/* min(rate) / max(rate) over rate[0..nt): 1 = even, NaN when nt < 1 or a rate <= 0. */
double ocb_team_balance(const double *rate, int nt);

#endif

/* hostload: how much CPU time other processes (and the hypervisor: steal) took while a
 * case ran. On a machine whose cores all run the case's threads, any other runnable
 * thread costs a spin-waiting team a scheduler time slice per parallel region (measured:
 * a 10 us 2-thread OpenMP region took 6.8 ms while another process kept one of 2 CPUs
 * busy), so the harness records it and flags the result (collect/suspect.h). */
#ifndef OCB_HOSTLOAD_H
#define OCB_HOSTLOAD_H

struct ocb_hostload {
	double busy_s; /* all CPUs' non-idle time incl. steal, /proc/stat (USER_HZ ticks) */
	double self_s; /* this process's user + system time, all threads, and its
			  waited-for children's (getrusage) */
	double wall_s; /* monotonic clock */
	int ok;        /* 0 when /proc/stat could not be read */
};

/* The other ranks of this process's MPI job on the same node (their pids, n <= 64; n = 0
 * clears): their CPU time counts as this process's own, so a 2-rank job on 2 cores is not
 * read as "host busy" by the rank that stores the results. */
void ocb_hostload_set_siblings(const int *pids, int n);

/* Takes a reading now. */
void ocb_hostload_read(struct ocb_hostload *h);

/* CPU seconds used by everything but this process between a and b (clamped at 0), and
 * the wall seconds between them; *others_s = 0 when either reading failed. */
void ocb_hostload_between(const struct ocb_hostload *a, const struct ocb_hostload *b,
			  double *others_s, double *wall_s);

#endif

/* hostload: how much CPU time other processes (and the hypervisor: steal) took while a
 * case ran. On a machine whose cores all run the case's threads, any other runnable
 * thread costs a spin-waiting team a scheduler time slice per parallel region (measured:
 * a 10 us 2-thread OpenMP region took 6.8 ms while another process kept one of 2 CPUs
 * busy), so the harness records it and flags the result (collect/suspect.h). */
#ifndef OCB_HOSTLOAD_H
#define OCB_HOSTLOAD_H

struct ocb_hostload {
	double busy_s; /* all CPUs' non-idle time incl. steal, /proc/stat (USER_HZ ticks) */
	double self_s; /* this process's user + system time, all threads (getrusage) */
	double wall_s; /* monotonic clock */
	int ok;        /* 0 when /proc/stat could not be read */
};

/* Takes a reading now. */
void ocb_hostload_read(struct ocb_hostload *h);

/* CPU seconds used by everything but this process between a and b (clamped at 0), and
 * the wall seconds between them; *others_s = 0 when either reading failed. */
void ocb_hostload_between(const struct ocb_hostload *a, const struct ocb_hostload *b,
			  double *others_s, double *wall_s);

#endif

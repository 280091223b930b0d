/* run_live: does the process that is writing a 'running' run still exist?
 *
 * A run row stores the writer's pid, hostname and boot id (/proc/sys/kernel/random/boot_id)
 * and its start time. Every reader (runs, show, report, compare, history) shows a
 * 'running' run whose process is gone as 'aborted' at once, without writing; the next
 * write-open also stores that verdict (db/store.c). The verdict is a pure function of the
 * stored identity and facts about this host (ocb_live_decide), so it is the same
 * everywhere and testable without processes. */
#ifndef OCB_RUN_LIVE_H
#define OCB_RUN_LIVE_H

#include <stdint.h>

enum ocb_live {
	OCB_LIVE_RUNNING = 0, /* same host, same boot, the pid is that process: running */
	OCB_LIVE_DEAD,        /* same host and another boot, or the pid is gone/reused */
	OCB_LIVE_OTHER_HOST,  /* written on another host: cannot tell ("running(other host)") */
};

/* This host as a run row records it. boot_id is "" where the kernel does not say. */
struct ocb_host_id {
	char hostname[256];
	char boot_id[64];
};

/* What is known about the stored process on this host (gathered by ocb_live_facts). */
struct ocb_live_facts {
	int same_host;        /* stored hostname == this host's */
	int boot;             /* 1 same boot id, 0 another boot, -1 unknown (one side empty) */
	int pid_exists;       /* kill(pid, 0) did not say ESRCH (EPERM counts as existing) */
	double proc_start;    /* the pid's start, Unix seconds (from /proc/PID/stat), NaN if
				 unknown */
	double run_start;     /* the run's started_at, Unix seconds, NaN if unknown */
};

/* The verdict. Rules, in order: other host -> OTHER_HOST; other boot -> DEAD; pid gone
 * -> DEAD; the pid's process started more than OCB_LIVE_SLACK_S after the run began (the
 * pid was reused) -> DEAD; else RUNNING. Pure. */
#define OCB_LIVE_SLACK_S 5.0
enum ocb_live ocb_live_decide(const struct ocb_live_facts *f);

/* This host's name and boot id, read once per process; never fails (fields may be ""). */
const struct ocb_host_id *ocb_host_id_self(void);

/* Gathers the facts for a stored (pid, hostname, boot_id, started_at) on this host, `self`
 * (NULL: ocb_host_id_self()). Reads /proc and calls kill(pid, 0); writes nothing. */
void ocb_live_facts(const struct ocb_host_id *self, int64_t pid, const char *hostname,
		    const char *boot_id, const char *started_at, struct ocb_live_facts *f);

/* The status a reader shows for a stored status: anything but "running" is returned
 * as is; a running run gives "running", "aborted" or "running(other host)". Returns a
 * static string or `status`. pid <= 0 or no hostname: "running" (nothing to check). */
const char *ocb_live_status(const char *status, int64_t pid, const char *hostname,
			    const char *boot_id, const char *started_at);


#endif

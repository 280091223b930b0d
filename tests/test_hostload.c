/* hostload: the CPU time of a registered sibling process (another rank of the job on this
 * node) counts as this process's own, and an unregistered one as another tenant's. */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../collect/hostload.h"

/* A child that burns CPU until killed. */
static pid_t spinner(void)
{
	pid_t p = fork();
	if (p == 0) {
		volatile unsigned long x = 0;
		for (;;)
			x++;
	}
	return p;
}

/* self_s gained over 0.3 s of sleeping here (this process itself uses almost no CPU,
 * while a spinning child, if any, burns it). */
static double self_growth(void)
{
	struct ocb_hostload a, b;
	ocb_hostload_read(&a);
	struct timespec ts = {0, 300 * 1000 * 1000};
	nanosleep(&ts, NULL);
	ocb_hostload_read(&b);
	cr_assert(a.ok && b.ok, "/proc/stat and getrusage readable");
	return b.self_s - a.self_s;
}

Test(hostload, a_sibling_ranks_cpu_is_counted_as_own)
{
	pid_t c = spinner();
	cr_assert_gt(c, 0);
	double alone = self_growth();
	int pid = (int)c;
	ocb_hostload_set_siblings(&pid, 1);
	double with = self_growth();
	ocb_hostload_set_siblings(NULL, 0);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	/* the child runs on its own core or shares this one: at least some CPU in 0.3 s */
	cr_expect_lt(alone, 0.05, "this process slept: %g s", alone);
	cr_expect_gt(with, alone + 0.02, "sibling's CPU counted: %g s (alone %g s)", with, alone);
}

Test(hostload, a_gone_sibling_counts_nothing)
{
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
	struct ocb_hostload a, b;
	ocb_hostload_read(&a);
	int pid = (int)c;
	ocb_hostload_set_siblings(&pid, 1);
	ocb_hostload_read(&b);
	ocb_hostload_set_siblings(NULL, 0);
	cr_assert(a.ok && b.ok);
	cr_expect_lt(b.self_s - a.self_s, 0.01, "a reaped process adds %g s", b.self_s - a.self_s);
}

/* A child of ours that ran and was waited for (the training workloads' forked memory
 * measurements, mpirun, gnuplot) is this process's work, not another tenant's. */
Test(hostload, a_waited_childs_cpu_is_counted_as_own)
{
	struct ocb_hostload a, b;
	ocb_hostload_read(&a);
	pid_t c = fork();
	if (c == 0) {
		/* burn 0.2 s of CPU */
		struct timespec t;
		volatile unsigned long x = 0;
		do {
			for (int i = 0; i < 100000; i++)
				x++;
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
		} while (t.tv_sec == 0 && t.tv_nsec < 200 * 1000 * 1000);
		_exit(0);
	}
	cr_assert_gt(c, 0);
	waitpid(c, NULL, 0);
	ocb_hostload_read(&b);
	cr_assert(a.ok && b.ok, "/proc/stat and getrusage readable");
	cr_expect_gt(b.self_s - a.self_s, 0.15, "the child's 0.2 s counted: %g s",
		     b.self_s - a.self_s);
}

/* train_memory: computed and measured (forked child, peak RSS) training memory. */
#include "train_memory.h"

#include <cblas.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/ocb_error.h"

/* What a child sends back. */
struct child_msg {
	int rc;
	char err[256];
	long base, peak;   /* kB */
	long file_base, file_end; /* kB of file-backed pages (code) at base and at the end */
	int hwm_reset;
	struct ocb_train_info info;
};

/* "VmRSS" / "VmHWM" of /proc/self/status in kB, -1 if unreadable. */
static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	size_t kl = strlen(key);
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = atol(line + kl + 1);
			break;
		}
	fclose(f);
	return v;
}

static int reset_hwm(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (!f)
		return 0;
	int ok = fputs("5", f) >= 0;
	return fclose(f) == 0 && ok;
}

/* One throw-away trainer of the same spec and cfg, one step, freed. */
static int warm_up(const struct ocb_trainer *t, const void *spec, const struct ocb_train_cfg *cfg)
{
	void *st = NULL;
	double loss;
	int rc = t->create(spec, cfg, &st);
	if (rc == OCB_OK)
		rc = t->step(st, 0, cfg->lr, &loss);
	t->free(st);
	return rc;
}

/* The child's work: t == NULL is the empty run. */
static void child(const struct ocb_trainer *t, const void *spec, const struct ocb_train_cfg *cfg,
		  long steps, struct child_msg *msg)
{
	enum { N = 1024 };
	void *st = NULL;
	mallopt(M_MMAP_THRESHOLD, 4096);
	/* no transparent huge pages in the child: khugepaged collapsing a region would add
	 * pages nobody touched, at a time of its choosing */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	if (cfg->threads > 0)
		openblas_set_num_threads(cfg->threads);
	/* OpenBLAS's threads and packing buffers (process overhead, not the training's):
	 * one sgemm large enough to fill its panels, on buffers freed before `base` */
	float *a = calloc((size_t)N * N, sizeof(float)), *c = calloc((size_t)N * N, sizeof(float));
	if (a && c)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, a, N,
			    0.0f, c, N);
	free(a);
	free(c);
	/* warm-up: one throw-away trainer and step, so that what the process maps once for
	 * any training (the code pages of the paths taken, e.g. ~0.5 MB of libm's; lazily
	 * initialised library state) is in `base`: it is not the training's memory, and the
	 * computed figures (allocations) do not hold it */
	if (t && (msg->rc = warm_up(t, spec, cfg))) {
		snprintf(msg->err, sizeof msg->err, "%s", ocb_lasterr());
		return;
	}
	/* free heap memory inherited from the parent is resident (counted in base) and would
	 * be reused without a page fault: give it back first (malloc_trim madvises free pages
	 * inside the heap too), so every page the training uses is a counted fault */
	malloc_trim(0);
	msg->base = status_kb("VmRSS");
	msg->file_base = status_kb("RssFile");
	if (t && (msg->rc = t->create(spec, cfg, &st))) {
		snprintf(msg->err, sizeof msg->err, "%s", ocb_lasterr());
		return;
	}
	/* the reset took effect only if the mark now sits at the current RSS (it was seen
	 * not to, now and then, in a busy process: then the mark still holds the parent's
	 * or the warm-up's peak and only the end-of-run RSS is used) */
	int reset = reset_hwm();
	long hwm0 = status_kb("VmHWM"), rss0 = status_kb("VmRSS");
	msg->hwm_reset = reset && hwm0 >= 0 && rss0 >= 0 && hwm0 <= rss0 + 256;
	for (long i = 0; t && i < steps && msg->rc == OCB_OK; i++) {
		double loss;
		msg->rc = t->step(st, i, cfg->lr, &loss);
	}
	if (msg->rc)
		snprintf(msg->err, sizeof msg->err, "%s", ocb_lasterr());
	long hwm = status_kb("VmHWM"), rss = status_kb("VmRSS");
	msg->file_end = status_kb("RssFile");
	msg->peak = msg->hwm_reset && hwm > rss ? hwm : rss;
	if (getenv("OCB_MEMDEBUG"))
		fprintf(stderr, "memdebug: %s base %ld hwm0 %ld rss0 %ld hwm %ld rss %ld kB, "
				"file-backed %ld -> %ld kB\n", t ? t->name : "empty", msg->base, hwm0,
			rss0, hwm, rss, msg->file_base, msg->file_end);
	if (t)
		t->info(st, &msg->info);
	/* no free: the process ends */
}

/* The data footprint of a child: peak minus base, less the file-backed pages (code) it
 * mapped in between (the warm-up maps nearly all of them before base). */
static long data_kb(const struct child_msg *c)
{
	long file = c->file_end >= 0 && c->file_base >= 0 && c->file_end > c->file_base
			    ? c->file_end - c->file_base
			    : 0;
	return c->peak - c->base - file;
}

static int run_child(const struct ocb_trainer *t, const void *spec,
		     const struct ocb_train_cfg *cfg, long steps, struct child_msg *msg)
{
	int fd[2], status = 0;
	memset(msg, 0, sizeof *msg);
	if (pipe(fd))
		return ocb_seterr(OCB_ERUNTIME, "memory measurement: pipe failed");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return ocb_seterr(OCB_ERUNTIME, "memory measurement: fork failed");
	}
	if (pid == 0) {
		close(fd[0]);
		child(t, spec, cfg, steps, msg);
		ssize_t w = write(fd[1], msg, sizeof *msg);
		_exit(w == (ssize_t)sizeof *msg ? 0 : 1);
	}
	close(fd[1]);
	size_t got = 0;
	while (got < sizeof *msg) {
		ssize_t r = read(fd[0], (char *)msg + got, sizeof *msg - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd[0]);
	waitpid(pid, &status, 0);
	if (got != sizeof *msg || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return ocb_seterr(OCB_ERUNTIME, "memory measurement: the child process failed");
	if (msg->rc)
		return ocb_seterr(msg->rc, "%s", msg->err);
	if (msg->base < 0 || msg->peak < 0)
		return ocb_seterr(OCB_ERUNTIME, "memory measurement: no /proc/self/status");
	return OCB_OK;
}

int ocb_train_measure_memory(const struct ocb_trainer *t, const void *spec,
			     const struct ocb_train_cfg *cfg, long steps, struct ocb_train_mem *m)
{
	struct child_msg e, r;
	int rc;
	memset(m, 0, sizeof *m);
	if (steps < 1)
		return ocb_seterr(OCB_EINVAL, "memory measurement: steps %ld < 1", steps);
	/* One thread in the children: libgomp cannot start a thread team in a process
	 * forked from one that already had a team (the pool's threads do not exist there,
	 * the child hangs); the buffers a training holds do not depend on threads. */
	struct ocb_train_cfg one = *cfg;
	one.threads = 1;
	if ((rc = run_child(NULL, NULL, &one, 0, &e)) || (rc = run_child(t, spec, &one, steps, &r)))
		return rc;
	const struct ocb_train_info *in = &r.info;
	m->nparams = in->nparams;
	m->weights = in->weight_bytes;
	m->grads = in->grad_bytes;
	m->optimizer = in->optimizer_bytes;
	m->activations = in->activation_bytes;
	m->computed = m->weights + m->grads + m->optimizer + m->activations;
	m->empty = data_kb(&e) * 1024L;
	m->measured = data_kb(&r) * 1024L - m->empty;
	m->code = (r.file_end - r.file_base) * 1024L;
	m->hwm_reset = r.hwm_reset;
	return OCB_OK;
}

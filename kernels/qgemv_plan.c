/* qgemv_plan: r16 GEMV settings chosen by timing (qgemv_plan.h). */
#include "qgemv_plan.h"

#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_stats.h"
#include "../common/ocb_time.h"
#include "quant_repack_impl.h"

#define PLAN_ROUNDS_MIN 5
#define PLAN_ROUNDS_MAX 41
#define PLAN_BUDGET_S 0.2 /* rounds beyond the minimum while the planning took less */
#define PLAN_SLOTS 64	   /* shapes remembered; the oldest is replaced beyond */
/* A setting replaces the default only if it also ran faster in at least PLAN_WINS_NUM of
 * every PLAN_WINS_DEN rounds (4 of 5 at the minimum of 5 rounds, 33 of 41 at the most;
 * each round times every setting back to back, so a pair saw the same host phase). Why: on
 * the Zen 5 VM medians a few percent apart are within the host's drift, and a plan that
 * left the default on them ran at 56% of the read loop (README, "Zen 5, 5 Dec 2026
 * (night)"); a difference a plan can trust wins nearly every round. */
#define PLAN_WINS_NUM 4
#define PLAN_WINS_DEN 5

/* one plan of the r16 kernels (only they are planned) */
struct plan_entry {
	enum qformat_type type;
	int64_t m, k;
	int threads;
	struct qgemv_setting set;
	double median_s; /* the kept setting's median GEMV time in the planning rounds */
};

static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;
static struct plan_entry plans[PLAN_SLOTS];
static int nplans, plan_next;

/* Candidates on AMD (measured on the Zen 5 VM, README "Zen 5: a planner"): the 32-block
 * formats on 8 streams with 1 KiB ahead (first on 3-4 Dec 2026; Q3_G's and Q2_G's
 * default), 4 with 2 KiB (1 KiB before 5 Dec: quant_repack.c qr_default_prefetch; the
 * others' default since) and without, 2 without (first by 13-24 points on another
 * instance); Q8_0's kernels stop at 4; TQ2_0 (and TQ1_0, run as TQ2_0) on 4 streams
 * with 2 KiB, 2 without (the two first at 1 thread, 4 at 2), or one 8 KiB ahead (first
 * on 3 and 4 Dec with the multi-stream kernels then: quant_repack.c qr_default_streams). The
 * prefetches are qr_default_prefetch's for those streams. On Intel the default (one
 * stream, 2 KiB into L1 and 8 KiB into L2; TQ2_0 1 KiB) and the same prefetches on 2 and 4
 * streams, which its read rate was never measured against. type: the kernels' format
 * (TQ2_0 for TQ1_0). */
int qgemv_plan_candidates(enum qformat_type type, const struct ocb_cpu_id *cpu,
			  struct qgemv_setting *out)
{
	const int ns0 = qr_default_streams(type, cpu);
	const struct qk_pf pf0 = qr_default_prefetch(type, cpu, ns0);
	int n = 0;
	out[n++] = (struct qgemv_setting){ns0, pf0.l1, pf0.l2, 0};
	struct qgemv_setting more[QGEMV_PLAN_MAX];
	int nm = 0;
	if (strcmp(cpu->vendor, "AuthenticAMD") == 0) {
		const struct qk_pf pf1 = qr_default_prefetch(type, cpu, 1),
				   pf4 = qr_default_prefetch(type, cpu, 4),
				   pf8 = qr_default_prefetch(type, cpu, 8);
		if (qr_max_streams(type) >= 8)
			more[nm++] = (struct qgemv_setting){8, pf8.l1, pf8.l2, 0};
		more[nm++] = (struct qgemv_setting){4, pf4.l1, pf4.l2, 0};
		if (type != QF_TQ2_0)
			more[nm++] = (struct qgemv_setting){4, 0, 0, 0};
		more[nm++] = (struct qgemv_setting){2, 0, 0, 0};
		if (type == QF_TQ2_0)
			more[nm++] = (struct qgemv_setting){1, pf1.l1, pf1.l2, 0};
	} else {
		more[nm++] = (struct qgemv_setting){2, pf0.l1, pf0.l2, 0};
		more[nm++] = (struct qgemv_setting){4, pf0.l1, pf0.l2, 0};
	}
	for (int i = 0; i < nm && n < QGEMV_PLAN_SETTINGS; i++) {
		int dup = 0;
		for (int j = 0; j < n; j++)
			dup |= memcmp(&out[j], &more[i], sizeof more[i]) == 0;
		if (!dup)
			out[n++] = more[i];
	}
	return n;
}

/* Why two groups: in one rotation over both, the same team setting always came right
 * after a one-thread call, and on the Zen 5 VM that made it slower (TQ2_0 16384^2 at 2
 * threads, three pairs of runs: 4 streams with 2 KiB 40.6 / 50.5 / 45.5 GB/s in that
 * place against 63.1 / 60.1 / 40.8 in the next, one stream with 8 KiB 56.7 / 53.3 / 35.2
 * there against 58.7 / 55.6 / 46.5 third; README, "Zen 5, 5 Dec 2026 (evening,
 * later)"). Here the one that follows the switch changes with the round, and the median
 * over rounds sets that aside. */
int qgemv_plan_order(int n, int nteam, int round, int i)
{
	if (nteam <= 0 || nteam > n)
		nteam = n;
	return i < nteam ? (i + round) % nteam : nteam + (i - nteam + round) % (n - nteam);
}

int qgemv_plan_pick(const double *t, int n, int rounds, double *median_s)
{
	double col[PLAN_ROUNDS_MAX];
	int best = 0;
	rounds = rounds < PLAN_ROUNDS_MAX ? rounds : PLAN_ROUNDS_MAX; /* the first ones */
	for (int j = 0; j < n; j++) {
		int wins = 0; /* rounds in which j ran faster than the default */
		for (int r = 0; r < rounds; r++) {
			col[r] = t[r * n + j];
			wins += t[r * n + j] < t[r * n];
		}
		median_s[j] = ocb_median(col, (size_t)rounds);
		if (median_s[j] < median_s[best] &&
		    wins * PLAN_WINS_DEN >= rounds * PLAN_WINS_NUM)
			best = j;
	}
	return best;
}

static int norm_threads(int threads)
{
	return threads > 0 ? threads : omp_get_max_threads();
}

/* index of f's plan at this shape and (normalised) thread count, or -1; plan_lock held */
static int plan_slot(const struct qformat *f, int64_t m, int64_t k, int threads)
{
	for (int i = 0; i < nplans; i++)
		if (plans[i].type == f->type && plans[i].m == m && plans[i].k == k &&
		    plans[i].threads == threads)
			return i;
	return -1;
}

/* A copy of f's plan at this shape and thread count into *e: 1, or 0 where none is in
 * force (f does not run the r16 kernels, or the environment's settings override plans) */
static int plan_get(const struct qformat *f, enum qgemv_kind kind, int64_t m, int64_t k,
		    int threads, struct plan_entry *e)
{
	if (!f || kind != QGEMV_VNNI512_R16 || qr_settings_overridden())
		return 0;
	pthread_mutex_lock(&plan_lock);
	const int i = plan_slot(f, m, k, norm_threads(threads));
	if (i >= 0)
		*e = plans[i];
	pthread_mutex_unlock(&plan_lock);
	return i >= 0;
}

int qgemv_plan_find_kind(const struct qformat *f, enum qgemv_kind kind, int64_t m, int64_t k,
			 int threads, struct qgemv_setting *set)
{
	struct plan_entry e;
	if (!plan_get(f, kind, m, k, threads, &e))
		return 0;
	*set = e.set;
	return 1;
}

int qgemv_plan_find(const struct qformat *f, int64_t m, int64_t k, int threads,
		    struct qgemv_setting *set)
{
	return f && qgemv_plan_find_kind(f, qgemv_choose(f), m, k, threads, set);
}

double qgemv_plan_median(const struct qformat *f, int64_t m, int64_t k, int threads)
{
	struct plan_entry e;
	return f && plan_get(f, qgemv_choose(f), m, k, threads, &e) ? e.median_s : 0.0;
}

static void plan_keep(const struct qformat *f, int64_t m, int64_t k, int threads,
		      const struct qgemv_setting *set, double median_s)
{
	pthread_mutex_lock(&plan_lock);
	int slot = plan_slot(f, m, k, threads);
	if (slot < 0) {
		slot = nplans < PLAN_SLOTS ? nplans++ : plan_next;
		plan_next = (slot + 1) % PLAN_SLOTS;
	}
	plans[slot] = (struct plan_entry){f->type, m, k, threads, *set, median_s};
	pthread_mutex_unlock(&plan_lock);
}

void qgemv_plan_forget(void)
{
	pthread_mutex_lock(&plan_lock);
	nplans = plan_next = 0;
	pthread_mutex_unlock(&plan_lock);
}

int qgemv_plan(const struct qformat *f, const void *wr, int64_t m, int64_t k, const void *xq,
	       float *y, int threads, const struct qgemv_plan_opts *opts,
	       struct qgemv_plan_info *info)
{
	struct qgemv_plan_info local;
	if (!info)
		info = &local;
	memset(info, 0, sizeof *info);
	if (!f || !wr || !xq || !y)
		return ocb_seterr(OCB_EINVAL, "qgemv_plan: NULL argument");
	const double t0 = ocb_now_s();
	info->setting = qr_default_setting(qr_kernel_type(f));
	if (qgemv_choose(f) != QGEMV_VNNI512_R16 || !qrepack_supported(f)) {
		info->why = "not the r16 kernels";
		return OCB_OK;
	}
	if (qr_settings_overridden()) {
		info->why = "set by the environment";
		return OCB_OK;
	}
	const char *off = getenv("OCB_QGEMV_PLAN");
	if (off && strcmp(off, "0") == 0) {
		info->why = "OCB_QGEMV_PLAN=0";
		return OCB_OK;
	}
	threads = norm_threads(threads);
	int n = qgemv_plan_candidates(qr_kernel_type(f), ocb_cpu_id(), info->cand);
	const int nteam = n; /* the settings on the whole team: cand[0, nteam) */
	/* and each on one thread, after them all: at 1024 x 1024 a 2-thread call (4-9 us)
	 * cost about as much to start and join as it saved on the Zen 5 VM (README). Every
	 * setting, not the default alone: the one-thread call's best setting is not the
	 * default (Q4_0 1024^2 at 1 thread: 7.4 us with 4 streams, 8.9 with the default 8),
	 * and a plan that fell back to the default on one thread ran slower than the
	 * 1-thread case, which had planned its own */
	if (threads > 1) {
		for (int j = 0, n1 = n; j < n1; j++) {
			info->cand[n] = info->cand[j];
			info->cand[n++].threads = 1;
		}
	}
	double *t = malloc(sizeof(double) * (size_t)(PLAN_ROUNDS_MAX * n));
	if (!t)
		return ocb_seterr(OCB_ENOMEM, "qgemv_plan: timings");
	const int nc = opts && opts->copies && opts->ncopies > 0 ? opts->ncopies : 0;
	int rc = OCB_OK, rounds = 0, next = 0;
	for (int j = 0; j < n && !rc; j++) /* once each untimed: code and activations warm */
		rc = qgemv_r8_setting(f, wr, m, k, xq, y, threads, &info->cand[j]);
	/* rotating order, so that every setting sees the host's phases alike (and none
	 * always follows a one-thread call: qgemv_plan_order) */
	while (!rc && rounds < PLAN_ROUNDS_MAX &&
	       (rounds < PLAN_ROUNDS_MIN || ocb_now_s() - t0 < PLAN_BUDGET_S ||
		rounds % 2 == 0)) {
		for (int i = 0; i < n && !rc; i++) {
			const int j = qgemv_plan_order(n, nteam, rounds, i);
			const void *w = nc ? opts->copies[next] : wr;
			next = nc ? (next + 1) % nc : 0;
			/* one matrix and no hook: timed warm, after an untimed call of the same
			 * setting, so that its threads find their rows in their own caches, as the
			 * repetitions that follow will (after another thread count's call they
			 * would be in the other core's L2) */
			if (opts && opts->before)
				opts->before(opts->arg);
			else if (nc <= 1 && (rc = qgemv_r8_setting(f, w, m, k, xq, y, threads,
								    &info->cand[j])))
				break;
			const double s = ocb_now_s();
			rc = qgemv_r8_setting(f, w, m, k, xq, y, threads, &info->cand[j]);
			t[rounds * n + j] = ocb_now_s() - s;
		}
		rounds++;
	}
	if (!rc) {
		info->ncand = n;
		info->rounds = rounds;
		info->chosen = qgemv_plan_pick(t, n, rounds, info->median_s);
		info->setting = info->cand[info->chosen];
		plan_keep(f, m, k, threads, &info->setting, info->median_s[info->chosen]);
	}
	free(t);
	info->seconds = ocb_now_s() - t0;
	return rc;
}

const char *qgemv_plan_variant(const struct qformat *f, const struct qgemv_setting *set)
{
	return f && qgemv_choose(f) == QGEMV_VNNI512_R16
		       ? qr_r16_variant(f, set->streams, set->threads == 1)
		       : qgemv_variant(f);
}

/* counters: PAPI event sets around a timed region (REFERENCE.md §3 "PAPI").
 *
 * Lifecycle: ocb_counters_open() initialises PAPI once per process, builds one event
 * set with every requested event that PAPI can add, and records PAPI's reason for every
 * one it cannot (never a 0). If an add answers PAPI_ECNFLCT (the events do not fit the
 * hardware counters together) the set is rebuilt multiplexed. A trial start/stop in
 * open() catches sets that add but cannot run, so start/stop during a case only fail on
 * a real run-time error.
 *
 * Multiplex ratio stored per event (struct ocb_counter_val.multiplex_ratio):
 *   1.0 when the set is not multiplexed (the event was counted all the time);
 *   when multiplexed, PAPI scales each count by time_enabled / time_running inside
 *   PAPI_read/PAPI_stop but does not expose that ratio per event, so we store the
 *   estimate min(1, hardware counters of the component / events in the set): the
 *   fraction of time each event is on a counter under round-robin rotation.
 *
 * Scope: PAPI's perf_event component counts the thread that called start (no
 * PAPI_thread_init, no inheritance): work done by OpenBLAS/OpenMP worker threads of a
 * multi-threaded case is not in the counts; per-thread counting is not done here. */
#include "counters.h"

#include <math.h>

#include <papi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"

#define EV_NAME 64
#define EV_REASON 160

/* The default request: cycles, instructions, fp32 operations (PAPI_SP_OPS, else
 * PAPI_FP_OPS: "A|B" lists alternatives, the first that can be added is used and is the
 * name recorded), cache misses per level, and two software events that work in VMs. */
const char *const ocb_default_events[] = {
	"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_SP_OPS|PAPI_FP_OPS", "PAPI_L1_DCM",
	"PAPI_L2_DCM",  "PAPI_L3_TCM",  "perf::TASK-CLOCK",        "perf::PAGE-FAULTS",
	NULL,
};

struct ctr_event {
	char name[EV_NAME];     /* the alternative in use (or the first one requested) */
	int pos;                /* index in the PAPI value array; -1 when unavailable */
	char reason[EV_REASON]; /* why unavailable */
};

struct ocb_counters {
	int n;                  /* requested events */
	struct ctr_event *ev;   /* n of them */
	char (*req)[EV_NAME * 4]; /* the request strings, n of them (alternatives kept) */
	int set;                /* PAPI event set or PAPI_NULL */
	int nadd;               /* events in the set */
	int multiplexed;
	double mux_ratio;
	int running;
	long long *raw;         /* nadd values from PAPI_stop */
	char status[256];
};

/* PAPI_library_init once per process; the result is kept for every later open. */
static pthread_once_t papi_once = PTHREAD_ONCE_INIT;
static int papi_init_rc;
static int papi_mux_rc = 1; /* 1: PAPI_multiplex_init not called yet */
static pthread_mutex_t papi_mux_lock = PTHREAD_MUTEX_INITIALIZER;

static void papi_init(void)
{
	papi_init_rc = PAPI_library_init(PAPI_VER_CURRENT);
}

/* 1 when PAPI is initialised; else fills why[len]. */
static int papi_ready(char *why, size_t len)
{
	pthread_once(&papi_once, papi_init);
	if (papi_init_rc == PAPI_VER_CURRENT)
		return 1;
	if (papi_init_rc > 0)
		snprintf(why, len, "PAPI_library_init: library version %d.%d differs from header %d.%d",
			 PAPI_VERSION_MAJOR(papi_init_rc), PAPI_VERSION_MINOR(papi_init_rc),
			 PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION));
	else
		snprintf(why, len, "PAPI_library_init: %s", PAPI_strerror(papi_init_rc) ?
			 PAPI_strerror(papi_init_rc) : "unknown error");
	return 0;
}

static const char *papi_err(int rc)
{
	const char *s = PAPI_strerror(rc);
	return s ? s : "unknown PAPI error";
}

static int multiplex_init(void)
{
	pthread_mutex_lock(&papi_mux_lock);
	if (papi_mux_rc == 1)
		papi_mux_rc = PAPI_multiplex_init();
	int rc = papi_mux_rc;
	pthread_mutex_unlock(&papi_mux_lock);
	return rc;
}

/* Appends the reasons of disabled CPU components ("perf_event: Error libpfm4 no default
 * PMU found") to buf: that is usually why nothing can be counted in a VM. */
static void append_disabled_components(char *buf, size_t len)
{
	int nc = PAPI_num_components();
	for (int i = 0; i < nc; i++) {
		const PAPI_component_info_t *ci = PAPI_get_component_info(i);
		if (!ci || !ci->disabled || strncmp(ci->name, "perf_event", 10) != 0)
			continue;
		size_t at = strlen(buf);
		if (at + 180 < len)
			snprintf(buf + at, len - at, "; %.40s disabled: %.120s", ci->name,
				 ci->disabled_reason[0] ? ci->disabled_reason : papi_err(ci->disabled));
	}
}

static void set_all_unavailable(struct ocb_counters *c, const char *fmt, const char *what)
{
	for (int i = 0; i < c->n; i++) {
		c->ev[i].pos = -1;
		snprintf(c->ev[i].reason, sizeof c->ev[i].reason, fmt, what);
	}
	c->nadd = 0;
}

static void destroy_set(struct ocb_counters *c)
{
	if (c->set == PAPI_NULL)
		return;
	if (c->running) {
		PAPI_stop(c->set, c->raw); /* raw holds n >= nadd values */
		c->running = 0;
	}
	PAPI_cleanup_eventset(c->set);
	PAPI_destroy_eventset(&c->set);
	c->set = PAPI_NULL;
	c->nadd = 0;
}

/* Copies the i-th '|'-separated alternative of req into out (EV_NAME). 0 if none. */
static int alternative(const char *req, int i, char *out)
{
	const char *p = req;
	for (; i > 0; i--) {
		p = strchr(p, '|');
		if (!p)
			return 0;
		p++;
	}
	size_t l = strcspn(p, "|");
	memcpy(out, p, l);
	out[l] = '\0';
	return 1;
}

/* Component of the first request PAPI knows, for binding a multiplexed set; 0 if none. */
static int first_component(const struct ocb_counters *c)
{
	char name[EV_NAME];
	for (int i = 0; i < c->n; i++)
		for (int a = 0; alternative(c->req[i], a, name); a++) {
			int code = 0;
			if (PAPI_event_name_to_code(name, &code) == PAPI_OK) {
				int cidx = PAPI_get_event_component(code);
				if (cidx >= 0)
					return cidx;
			}
		}
	return 0;
}

/* Builds the event set. Returns 1 when a conflict asks for a multiplexed rebuild
 * (only when !mux), else 0. Unavailable events get PAPI's reason. */
static int build_set(struct ocb_counters *c, int mux)
{
	int rc, cidx = 0;
	char name[EV_NAME];

	c->set = PAPI_NULL;
	c->nadd = 0;
	c->multiplexed = 0;
	rc = PAPI_create_eventset(&c->set);
	if (rc != PAPI_OK) {
		c->set = PAPI_NULL;
		set_all_unavailable(c, "PAPI_create_eventset: %s", papi_err(rc));
		return 0;
	}
	if (mux) {
		cidx = first_component(c);
		if ((rc = multiplex_init()) != PAPI_OK ||
		    (rc = PAPI_assign_eventset_component(c->set, cidx)) != PAPI_OK ||
		    (rc = PAPI_set_multiplex(c->set)) != PAPI_OK) {
			destroy_set(c);
			set_all_unavailable(c, "PAPI multiplexing: %s", papi_err(rc));
			return 0;
		}
		c->multiplexed = 1;
	}
	for (int i = 0; i < c->n; i++) {
		struct ctr_event *e = &c->ev[i];
		e->pos = -1;
		e->reason[0] = '\0';
		alternative(c->req[i], 0, e->name);
		for (int a = 0; alternative(c->req[i], a, name); a++) {
			rc = PAPI_add_named_event(c->set, name);
			if (rc == PAPI_OK) {
				strcpy(e->name, name);
				e->pos = c->nadd++;
				e->reason[0] = '\0';
				break;
			}
			if (rc == PAPI_ECNFLCT && !mux)
				return 1;
			/* Keep the first alternative's reason: it is the event asked for. */
			if (!e->reason[0])
				snprintf(e->reason, sizeof e->reason, "%s", papi_err(rc));
		}
	}
	if (mux) {
		int hw = PAPI_num_cmp_hwctrs(cidx);
		c->mux_ratio = hw > 0 && c->nadd > hw ? (double)hw / c->nadd : 1.0;
	}
	return 0;
}

/* Trial start/stop: some sets add fine but cannot be scheduled (PAPI_ECNFLCT at start)
 * or opened (PAPI_ESYS/EPERM). Returns 1 when a multiplexed rebuild should be tried. */
static int trial_run(struct ocb_counters *c)
{
	if (c->nadd == 0)
		return 0;
	int rc = PAPI_start(c->set);
	if (rc == PAPI_OK) {
		rc = PAPI_stop(c->set, c->raw);
		if (rc == PAPI_OK)
			return 0;
	}
	if (rc == PAPI_ECNFLCT && !c->multiplexed)
		return 1;
	destroy_set(c);
	set_all_unavailable(c, "PAPI_start: %s", papi_err(rc));
	return 0;
}

int ocb_counters_open(const char *const *events, int n, int disable, struct ocb_counters **out)
{
	struct ocb_counters *c = NULL;
	int rc = OCB_OK;
	char why[256] = "";

	*out = NULL;
	if (n < 0 || (n > 0 && !events))
		return ocb_seterr(OCB_EINVAL, "counters: bad event list");
	for (int i = 0; i < n; i++) {
		const char *r = events[i];
		size_t l = r ? strlen(r) : 0;
		if (l == 0 || l >= EV_NAME * 4)
			return ocb_seterr(OCB_EINVAL, "counters: event %d: %s", i + 1,
					  l ? "name too long" : "empty name");
		for (const char *p = r; *p;) {
			size_t a = strcspn(p, "|");
			if (a == 0 || a >= EV_NAME)
				return ocb_seterr(OCB_EINVAL, "counters: event '%s': %s", r,
						  a ? "name too long (63 characters at most)"
						    : "empty name");
			p += a;
			if (*p == '|' && !*++p)
				return ocb_seterr(OCB_EINVAL, "counters: event '%s': empty name", r);
		}
	}

	c = calloc(1, sizeof *c);
	if (!c)
		goto nomem;
	c->set = PAPI_NULL;
	c->n = n;
	c->mux_ratio = 1.0;
	/* One allocation for the per-event arrays. */
	size_t bytes = (size_t)n * (sizeof *c->ev + sizeof *c->req + sizeof *c->raw) + 1;
	char *blk = calloc(1, bytes);
	if (!blk)
		goto nomem;
	c->raw = (long long *)blk;
	c->ev = (struct ctr_event *)(blk + (size_t)n * sizeof *c->raw);
	c->req = (char (*)[EV_NAME * 4])((char *)c->ev + (size_t)n * sizeof *c->ev);
	for (int i = 0; i < n; i++) {
		snprintf(c->req[i], sizeof c->req[i], "%s", events[i]);
		alternative(c->req[i], 0, c->ev[i].name);
		c->ev[i].pos = -1;
	}

	if (disable) {
		snprintf(c->status, sizeof c->status, "disabled by --no-papi");
		set_all_unavailable(c, "%s", "PAPI disabled (--no-papi)");
		goto done;
	}
	if (!papi_ready(why, sizeof why)) {
		snprintf(c->status, sizeof c->status, "%s", why);
		set_all_unavailable(c, "PAPI unavailable: %s", why);
		goto done;
	}
	if (build_set(c, 0) || trial_run(c)) {
		destroy_set(c);
		build_set(c, 1);
		trial_run(c);
	}
	if (c->nadd == 0) {
		destroy_set(c);
		snprintf(c->status, sizeof c->status, "no requested event can be counted here");
		append_disabled_components(c->status, sizeof c->status);
	}
done:
	*out = c;
	return rc;
nomem:
	ocb_counters_free(c);
	return ocb_seterr(OCB_ENOMEM, "counters: %d events", n);
}

void ocb_counters_free(struct ocb_counters *c)
{
	if (!c)
		return;
	destroy_set(c);
	free(c->raw); /* the per-event block starts at raw */
	free(c);
}

int ocb_counters_active(const struct ocb_counters *c)
{
	return c && c->nadd > 0;
}

const char *ocb_counters_status(const struct ocb_counters *c)
{
	return c ? c->status : "no counters";
}

int ocb_counters_count(const struct ocb_counters *c)
{
	return c ? c->n : 0;
}

int ocb_counters_multiplexed(const struct ocb_counters *c)
{
	return c && c->multiplexed;
}

int ocb_counters_start(struct ocb_counters *c)
{
	if (!c || c->nadd == 0)
		return OCB_OK;
	if (c->running)
		return ocb_seterr(OCB_EINVAL, "counters: already started");
	int rc = PAPI_start(c->set);
	if (rc != PAPI_OK)
		return ocb_seterr(OCB_EUNAVAIL, "PAPI_start: %s", papi_err(rc));
	c->running = 1;
	return OCB_OK;
}

int ocb_counters_stop(struct ocb_counters *c, long reps, struct ocb_counter_val *vals)
{
	int rc = OCB_OK;
	if (!c)
		return OCB_OK;
	if (reps < 1)
		reps = 1;
	int ok = 0;
	if (c->running) {
		int prc = PAPI_stop(c->set, c->raw);
		c->running = 0;
		if (prc == PAPI_OK)
			ok = 1;
		else
			rc = ocb_seterr(OCB_EUNAVAIL, "PAPI_stop: %s", papi_err(prc));
	}
	for (int i = 0; vals && i < c->n; i++) {
		const struct ctr_event *e = &c->ev[i];
		struct ocb_counter_val *v = &vals[i];
		memset(v, 0, sizeof *v);
		snprintf(v->event, sizeof v->event, "%s", e->name);
		if (e->pos >= 0 && ok) {
			v->available = 1;
			v->value = (double)c->raw[e->pos] / (double)reps;
			v->multiplex_ratio = c->multiplexed ? c->mux_ratio : 1.0;
		} else {
			v->available = 0;
			v->value = NAN; /* not measured: stored NULL */
			snprintf(v->reason, sizeof v->reason, "%s",
				 e->pos >= 0 ? "PAPI_stop failed" : e->reason);
			v->multiplex_ratio = NAN;
		}
	}
	return rc;
}

/* ---- what PAPI offers on this machine (for `ocbench events`) ---- */

int ocb_counters_papi_info(int disable, struct ocb_papi_info *info)
{
	memset(info, 0, sizeof *info);
	snprintf(info->header_version, sizeof info->header_version, "%d.%d.%d.%d",
		 PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION),
		 PAPI_VERSION_REVISION(PAPI_VERSION), PAPI_VERSION_INCREMENT(PAPI_VERSION));
	if (disable) {
		snprintf(info->status, sizeof info->status, "disabled by --no-papi");
		return OCB_OK;
	}
	if (!papi_ready(info->status, sizeof info->status))
		return OCB_OK;
	info->ok = 1;
	int v = PAPI_get_opt(PAPI_LIB_VERSION, NULL);
	if (v > 0)
		snprintf(info->version, sizeof info->version, "%d.%d.%d.%d", PAPI_VERSION_MAJOR(v),
			 PAPI_VERSION_MINOR(v), PAPI_VERSION_REVISION(v), PAPI_VERSION_INCREMENT(v));
	else
		snprintf(info->version, sizeof info->version, "%s", info->header_version);

	/* Presets: every preset PAPI knows, counted when this machine can count it. */
	int code = PAPI_PRESET_MASK;
	if (PAPI_enum_event(&code, PAPI_ENUM_FIRST) == PAPI_OK) {
		do {
			info->npreset_known++;
			if (PAPI_query_event(code) == PAPI_OK)
				info->npreset++;
		} while (PAPI_enum_event(&code, PAPI_ENUM_EVENTS) == PAPI_OK);
	}
	/* Natives: per enabled component. */
	int nc = PAPI_num_components();
	for (int cidx = 0; cidx < nc; cidx++) {
		const PAPI_component_info_t *ci = PAPI_get_component_info(cidx);
		if (!ci)
			continue;
		if (ci->disabled) {
			if (!strncmp(ci->name, "perf_event", 10)) {
				size_t at = strlen(info->disabled);
				if (at + 250 < sizeof info->disabled)
					snprintf(info->disabled + at, sizeof info->disabled - at,
						 "%s%.40s: %.200s", at ? "; " : "", ci->name,
						 ci->disabled_reason[0] ? ci->disabled_reason
									: papi_err(ci->disabled));
			}
			continue;
		}
		info->ncomponents++;
		info->hw_counters += ci->num_cntrs;
		code = PAPI_NATIVE_MASK;
		if (PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, cidx) != PAPI_OK)
			continue;
		do
			info->nnative++;
		while (PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, cidx) == PAPI_OK);
	}
	return OCB_OK;
}

int ocb_counters_probe(const char *const *names, int n, int no_papi,
		       struct ocb_counters_probe *out)
{
	memset(out, 0, sizeof *out);
	int rc = ocb_counters_open(names, n, no_papi, &out->ctr);
	if (rc != OCB_OK)
		return rc;
	out->vals = calloc((size_t)n, sizeof *out->vals);
	if (!out->vals)
		return ocb_seterr(OCB_ENOMEM, "%d events", n);
	ocb_counters_start(out->ctr);
	ocb_counters_stop(out->ctr, 1, out->vals);
	ocb_counters_papi_info(no_papi, &out->info);
	return OCB_OK;
}

void ocb_counters_probe_free(struct ocb_counters_probe *p)
{
	free(p->vals);
	ocb_counters_free(p->ctr);
	memset(p, 0, sizeof *p);
}

/* counters: PAPI event sets around a timed region (REFERENCE.md §3 "PAPI").
 *
 * An event the machine lacks is reported unavailable with PAPI's reason, never as 0.
 * More events than the hardware can count at once -> multiplexing, ratio recorded.
 * With PAPI disabled (--no-papi) or failing to initialise, every event is unavailable
 * and ocb_counters_active() is 0: results are timing-only. */
#ifndef OCB_COUNTERS_H
#define OCB_COUNTERS_H

#include "../db/records.h"

struct ocb_counters;

/* The default request (DESIGN/issue 2). NULL-terminated. */
extern const char *const ocb_default_events[];

/* Builds an event set for `events` (n of them). disable != 0 -> no PAPI at all.
 * Never fails for an unavailable event or a missing PAPI: those become unavailable
 * entries. Fails only on allocation (OCB_ENOMEM) or an empty/too long event name
 * (OCB_EINVAL). Caller frees with ocb_counters_free(). */
int ocb_counters_open(const char *const *events, int n, int disable, struct ocb_counters **out);
void ocb_counters_free(struct ocb_counters *c);

/* 1 if at least one event is being counted. */
int ocb_counters_active(const struct ocb_counters *c);
/* Why PAPI is off ("disabled by --no-papi", "PAPI_library_init: ..."), or "". */
const char *ocb_counters_status(const struct ocb_counters *c);
/* Number of requested events; ocb_counters_stop fills that many values. */
int ocb_counters_count(const struct ocb_counters *c);

/* Start counting / stop and read. stop divides totals by `reps` (per-repetition values)
 * and fills vals[0..count-1] (available ones with value and multiplex ratio, the others
 * with available = 0 and the reason). */
int ocb_counters_start(struct ocb_counters *c);
int ocb_counters_stop(struct ocb_counters *c, long reps, struct ocb_counter_val *vals);

/* Request strings may list alternatives "A|B": the first PAPI can add is counted and
 * recorded under its own name (ocb_default_events uses "PAPI_SP_OPS|PAPI_FP_OPS"). */

/* 1 if the event set had to be multiplexed. multiplex_ratio in the values is then
 * min(1, hardware counters / events in the set) (PAPI does not report the per-event
 * enabled/running ratio; it scales the counts itself); 1.0 when not multiplexed. */
int ocb_counters_multiplexed(const struct ocb_counters *c);

/* What PAPI offers here, for `ocbench events` and the host fingerprint. */
struct ocb_papi_info {
	int ok;                   /* PAPI initialised */
	char version[32];         /* library version "7.0.0.0"; "" when !ok */
	char header_version[32];  /* version ocbench was built against */
	char status[256];         /* why !ok ("disabled by --no-papi", "PAPI_library_init: ...") */
	int npreset;              /* presets countable on this machine (PAPI_query_event) */
	int npreset_known;        /* presets PAPI knows (PAPI_enum_event) */
	int nnative;              /* native events of the enabled components */
	int ncomponents;          /* enabled components */
	int hw_counters;          /* hardware counters of the enabled components */
	char disabled[512];       /* "perf_event: <why>" for disabled CPU components, or "" */
};
/* Fills *info (disable != 0: PAPI is not touched). Always returns OCB_OK. */
int ocb_counters_papi_info(int disable, struct ocb_papi_info *info);

/* `ocbench events`: opens names[0..n) (OCB_EINVAL: an unknown name), counts once around
 * nothing (an event that starts and reads is available) and reads the PAPI facts.
 * Fills *out; its vals[0..n) and ctr are owned (ocb_counters_probe_free), also on error. */
struct ocb_counters_probe {
	struct ocb_counters *ctr;     /* status and multiplexing: ocb_counters_status() etc. */
	struct ocb_counter_val *vals; /* [n] */
	struct ocb_papi_info info;
};
int ocb_counters_probe(const char *const *names, int n, int no_papi,
		       struct ocb_counters_probe *out);
void ocb_counters_probe_free(struct ocb_counters_probe *p);

#endif

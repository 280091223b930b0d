/* Tests of collect/counters: unavailable events are reported with a reason, never as
 * a 0; software events count where PAPI's perf_event component is enabled. Both paths
 * are checked: which one applies is asked from PAPI itself, not assumed. */
#include <criterion/criterion.h>
#include <math.h>
#include <papi.h>
#include <string.h>

#include "../collect/counters.h"

/* 1 when PAPI initialises and knows perf::TASK-CLOCK on this machine (its perf_event
 * component is enabled and libpfm4 has the perf software PMU). In this VM it does not:
 * "perf_event disabled: Error libpfm4 no default PMU found". */
static int task_clock_exists(void)
{
	struct ocb_papi_info info;
	ocb_counters_papi_info(0, &info);
	int code = 0;
	return info.ok && PAPI_event_name_to_code("perf::TASK-CLOCK", &code) == PAPI_OK;
}

static volatile double sink;

static void some_work(void)
{
	double s = 0;
	for (int i = 0; i < 3000000; i++)
		s += (double)i * 1e-9;
	sink = s;
}

static int find(const struct ocb_counter_val *v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].event, name))
			return i;
	return -1;
}

Test(counters, default_list)
{
	int n = 0;
	while (ocb_default_events[n])
		n++;
	cr_assert_eq(n, 8);
	struct ocb_counters *c = NULL;
	cr_assert_eq(ocb_counters_open(ocb_default_events, n, 0, &c), 0);
	cr_assert_eq(ocb_counters_count(c), n);
	struct ocb_counter_val v[8];
	cr_assert_eq(ocb_counters_start(c), 0);
	some_work();
	cr_assert_eq(ocb_counters_stop(c, 1, v), 0);

	int cyc = find(v, n, "PAPI_TOT_CYC");
	int tc = find(v, n, "perf::TASK-CLOCK");
	cr_assert(cyc >= 0 && tc >= 0);
	cr_expect(find(v, n, "PAPI_SP_OPS") >= 0 || find(v, n, "PAPI_FP_OPS") >= 0);
	int enabled = task_clock_exists();
	int active = 0;
	for (int i = 0; i < n; i++) {
		if (v[i].available) {
			active = 1;
			cr_expect(v[i].reason[0] == '\0');
			cr_expect(v[i].multiplex_ratio > 0 && v[i].multiplex_ratio <= 1.0);
		} else {
			cr_expect(v[i].reason[0] != '\0', "%s unavailable without a reason",
				  v[i].event);
		}
	}
	cr_expect_eq(ocb_counters_active(c), active);
	/* No hardware counters here (VM) -> PAPI_TOT_CYC unavailable, with PAPI's words. */
	if (!v[cyc].available) {
		cr_expect(strlen(v[cyc].reason) > 3);
		cr_log_info("PAPI_TOT_CYC: %s", v[cyc].reason);
	}
	if (enabled) {
		cr_expect(v[tc].available, "perf::TASK-CLOCK: %s", v[tc].reason);
		cr_expect(v[tc].value > 0, "TASK-CLOCK ns after work: %g", v[tc].value);
		cr_expect_str_empty(ocb_counters_status(c));
	} else {
		/* perf_event disabled (no PMU for libpfm4): TASK-CLOCK does not exist here. */
		cr_expect(!v[tc].available);
		cr_expect(strlen(v[tc].reason) > 3, "reason '%s'", v[tc].reason);
		cr_log_info("perf::TASK-CLOCK: %s", v[tc].reason);
	}
	if (!active) {
		/* nothing counts: results are timing-only and the status says why */
		cr_expect(strlen(ocb_counters_status(c)) > 0);
		cr_log_info("counters status: %s", ocb_counters_status(c));
	}
	ocb_counters_free(c);
}

Test(counters, per_rep_division)
{
	const char *ev[] = {"perf::TASK-CLOCK"};
	struct ocb_counters *c = NULL;
	cr_assert_eq(ocb_counters_open(ev, 1, 0, &c), 0);
	struct ocb_counter_val v1, v10;
	ocb_counters_start(c);
	some_work();
	cr_assert_eq(ocb_counters_stop(c, 1, &v1), 0);
	ocb_counters_start(c);
	some_work();
	cr_assert_eq(ocb_counters_stop(c, 1000000, &v10), 0);
	cr_expect_eq(v1.available, v10.available);
	if (v1.available) /* one millionth of ~ms of work per rep: far less than one rep */
		cr_expect(v10.value < v1.value / 100, "%g vs %g", v10.value, v1.value);
	else
		cr_expect_str_eq(v1.reason, v10.reason);
	ocb_counters_free(c);
}

Test(counters, disabled)
{
	struct ocb_counters *c = NULL;
	cr_assert_eq(ocb_counters_open(ocb_default_events, 8, 1, &c), 0);
	cr_expect_eq(ocb_counters_active(c), 0);
	cr_expect_str_eq(ocb_counters_status(c), "disabled by --no-papi");
	struct ocb_counter_val v[8];
	cr_assert_eq(ocb_counters_start(c), 0);
	cr_assert_eq(ocb_counters_stop(c, 3, v), 0);
	for (int i = 0; i < 8; i++) {
		cr_expect_eq(v[i].available, 0);
		cr_expect(strstr(v[i].reason, "--no-papi") != NULL, "%s", v[i].reason);
	}
	cr_expect_str_eq(v[0].event, "PAPI_TOT_CYC");
	cr_expect_str_eq(v[2].event, "PAPI_SP_OPS", "first alternative named when none counts");
	ocb_counters_free(c);
}

Test(counters, bogus_event_is_unavailable)
{
	const char *ev[] = {"NOT_AN_EVENT_XYZ", "perf::TASK-CLOCK", "PAPI_NOPE|ALSO::NOPE"};
	struct ocb_counters *c = NULL;
	cr_assert_eq(ocb_counters_open(ev, 3, 0, &c), 0, "a bogus name is not an error");
	struct ocb_counter_val v[3];
	ocb_counters_start(c);
	some_work();
	cr_assert_eq(ocb_counters_stop(c, 1, v), 0);
	cr_expect_str_eq(v[0].event, "NOT_AN_EVENT_XYZ");
	cr_expect_eq(v[0].available, 0);
	cr_expect(v[0].reason[0] != '\0');
	cr_expect_eq(v[2].available, 0);
	cr_expect_str_eq(v[2].event, "PAPI_NOPE");
	cr_expect_eq(v[1].available, task_clock_exists());
	ocb_counters_free(c);
}

Test(counters, bad_names)
{
	struct ocb_counters *c = NULL;
	const char *empty[] = {""};
	cr_expect_lt(ocb_counters_open(empty, 1, 0, &c), 0);
	cr_expect_null(c);
	const char *halfalt[] = {"PAPI_TOT_CYC|"};
	cr_expect_lt(ocb_counters_open(halfalt, 1, 0, &c), 0);
	char longname[100];
	memset(longname, 'A', 99);
	longname[99] = '\0';
	const char *lng[] = {longname};
	cr_expect_lt(ocb_counters_open(lng, 1, 0, &c), 0);
	cr_expect_null(c);
	ocb_counters_free(NULL);
}

Test(counters, papi_info)
{
	struct ocb_papi_info info;
	cr_assert_eq(ocb_counters_papi_info(1, &info), 0);
	cr_expect_eq(info.ok, 0);
	cr_expect_str_eq(info.status, "disabled by --no-papi");
	cr_assert_eq(ocb_counters_papi_info(0, &info), 0);
	if (info.ok) {
		cr_expect(info.version[0]);
		cr_expect(info.npreset_known > 50, "PAPI knows ~100 presets: %d", info.npreset_known);
		cr_expect(info.npreset <= info.npreset_known);
	}
}

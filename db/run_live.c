#include "run_live.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"
#include "store_int.h"

enum ocb_live ocb_live_decide(const struct ocb_live_facts *f)
{
	if (!f->same_host)
		return OCB_LIVE_OTHER_HOST;
	if (f->boot == 0)
		return OCB_LIVE_DEAD; /* the machine rebooted since: no process survives that */
	if (!f->pid_exists)
		return OCB_LIVE_DEAD;
	/* A live pid that started well after the run began belongs to another process. */
	if (isfinite(f->proc_start) && isfinite(f->run_start) &&
	    f->proc_start > f->run_start + OCB_LIVE_SLACK_S)
		return OCB_LIVE_DEAD;
	return OCB_LIVE_RUNNING;
}

/* First line of a small file without its newline into buf; "" if unreadable. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\r\n")] = '\0';
}

const struct ocb_host_id *ocb_host_id_self(void)
{
	static struct ocb_host_id self;
	static int known;
	if (!known) {
		if (gethostname(self.hostname, sizeof self.hostname - 1) != 0)
			self.hostname[0] = '\0';
		read_line("/proc/sys/kernel/random/boot_id", self.boot_id, sizeof self.boot_id);
		known = 1;
	}
	return &self;
}

/* Unix seconds at which process `pid` started: field 22 of /proc/PID/stat (clock ticks
 * since boot, proc(5)) + btime of /proc/stat. NaN if unknown. */
static double proc_start_time(int64_t pid)
{
	char path[64], buf[1024], line[256];
	double btime = NAN;
	snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return NAN;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the command name (field 2) may hold spaces and ')': fields restart after the last ')' */
	const char *p = strrchr(buf, ')');
	if (!p)
		return NAN;
	p++;
	for (int field = 3; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return NAN;
	unsigned long long ticks = strtoull(p + 1, NULL, 10);
	f = fopen("/proc/stat", "r");
	if (!f)
		return NAN;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "btime ", 6)) {
			btime = strtod(line + 6, NULL);
			break;
		}
	fclose(f);
	long hz = sysconf(_SC_CLK_TCK);
	if (!(hz > 0) || isnan(btime))
		return NAN;
	return btime + (double)ticks / (double)hz;
}

void ocb_live_facts(const struct ocb_host_id *self, int64_t pid, const char *hostname,
		    const char *boot_id, const char *started_at, struct ocb_live_facts *f)
{
	if (!self)
		self = ocb_host_id_self();
	memset(f, 0, sizeof *f);
	f->proc_start = NAN;
	f->run_start = ocb_iso8601_parse(started_at);
	f->same_host = hostname && *hostname && self->hostname[0] &&
		       strcmp(hostname, self->hostname) == 0;
	f->boot = !boot_id || !*boot_id || !self->boot_id[0] ? -1
		  : strcmp(boot_id, self->boot_id) == 0;
	if (!f->same_host || f->boot == 0 || pid <= 0)
		return;
	f->pid_exists = !(kill((pid_t)pid, 0) != 0 && errno == ESRCH);
	if (f->pid_exists)
		f->proc_start = proc_start_time(pid);
}

const char *ocb_live_status(const char *status, int64_t pid, const char *hostname,
			    const char *boot_id, const char *started_at)
{
	struct ocb_live_facts f;
	if (!status || strcmp(status, "running") != 0 || pid <= 0 || !hostname || !*hostname)
		return status;
	ocb_live_facts(NULL, pid, hostname, boot_id, started_at, &f);
	switch (ocb_live_decide(&f)) {
	case OCB_LIVE_DEAD: return "aborted";
	case OCB_LIVE_OTHER_HOST: return "running(other host)";
	default: return "running";
	}
}

static const char *arg_text(sqlite3_value *v)
{
	return sqlite3_value_type(v) == SQLITE_NULL ? NULL : (const char *)sqlite3_value_text(v);
}

/* ocb_status(status, pid, hostname, boot_id, started_at) */
static void sql_status(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
	(void)argc;
	const char *status = arg_text(argv[0]);
	if (!status) {
		sqlite3_result_null(cx);
		return;
	}
	const char *shown = ocb_live_status(status, sqlite3_value_int64(argv[1]), arg_text(argv[2]),
					    arg_text(argv[3]), arg_text(argv[4]));
	sqlite3_result_text(cx, shown, -1, SQLITE_TRANSIENT);
}

int ocb_live_register(sqlite3 *db)
{
	if (sqlite3_create_function(db, "ocb_status", 5, SQLITE_UTF8, NULL, sql_status, NULL,
				    NULL) != SQLITE_OK)
		return ocb_seterr(OCB_EDB, "register ocb_status: %s", sqlite3_errmsg(db));
	return OCB_OK;
}

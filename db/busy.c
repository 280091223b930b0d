/* busy: retrying statements another ocbench process kept waiting (busy.h). */
#define _GNU_SOURCE
#include "busy.h"

#include <strings.h>
#include <time.h>

static int is_busy(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/* A statement that may run again after SQLITE_BUSY: none of a transaction's work is lost.
 * `was_auto`: no transaction was open before it ran (it is its own, or a BEGIN); SQLite
 * may roll back an open transaction on SQLITE_BUSY, so the state after does not tell.
 * COMMIT / END / RELEASE returning SQLITE_BUSY leave their transaction open. */
static int retry_safe(int was_auto, const char *sql)
{
	while (sql && (*sql == ' ' || *sql == '\n' || *sql == '\t'))
		sql++;
	return was_auto || (sql && (strncasecmp(sql, "COMMIT", 6) == 0 ||
				    strncasecmp(sql, "END", 3) == 0 ||
				    strncasecmp(sql, "RELEASE", 7) == 0));
}

static void backoff(int attempt)
{
	long ms = 50L << attempt; /* 50 ms .. 6.4 s */
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int ocb_db_step_retry(sqlite3_stmt *st)
{
	int was_auto = sqlite3_get_autocommit(sqlite3_db_handle(st));
	int rc = sqlite3_step(st);
	for (int i = 0; i < OCB_BUSY_RETRIES && is_busy(rc) && retry_safe(was_auto, sqlite3_sql(st));
	     i++) {
		sqlite3_reset(st);
		backoff(i);
		rc = sqlite3_step(st);
	}
	return rc;
}

int ocb_db_exec_retry(sqlite3 *db, const char *sql, char **err)
{
	int was_auto = sqlite3_get_autocommit(db);
	int rc = sqlite3_exec(db, sql, NULL, NULL, err);
	for (int i = 0; i < OCB_BUSY_RETRIES && is_busy(rc) && retry_safe(was_auto, sql); i++) {
		if (err) {
			sqlite3_free(*err);
			*err = NULL;
		}
		backoff(i);
		rc = sqlite3_exec(db, sql, NULL, NULL, err);
	}
	return rc;
}

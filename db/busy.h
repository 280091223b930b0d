/* busy: what db/ does when another ocbench process holds the database (internal to db/).
 *
 * Several `ocbench run` processes may write one database while readers report from it
 * (WAL: readers never wait for writers; one writer at a time). Every connection has a
 * busy timeout (SQLite sleeps and retries for OCB_BUSY_TIMEOUT_MS). SQLite returns
 * SQLITE_BUSY without calling the busy handler in a few cases (a lock it cannot wait
 * for without risking deadlock, WAL recovery by another connection) and when the timeout
 * runs out under heavy load; these helpers then retry the statement themselves, with
 * growing sleeps, but only where a retry is safe (SQLite "Result and Error Codes",
 * SQLITE_BUSY): outside an explicit transaction, or a COMMIT / RELEASE, which leave the
 * transaction open when they return SQLITE_BUSY. */
#ifndef OCB_BUSY_H
#define OCB_BUSY_H

#include <sqlite3.h>

#define OCB_BUSY_TIMEOUT_MS 10000
#define OCB_BUSY_RETRIES 8 /* after the timeout: sleeps of 50 ms doubling to 6.4 s (~13 s) */

/* sqlite3_step(st), retried while it returns SQLITE_BUSY / SQLITE_LOCKED and a retry is
 * safe (see above). Returns the last sqlite3_step code. */
int ocb_db_step_retry(sqlite3_stmt *st);

/* sqlite3_exec(db, sql, NULL, NULL, err) of ONE statement, retried as above. */
int ocb_db_exec_retry(sqlite3 *db, const char *sql, char **err);

#endif

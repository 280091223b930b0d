/* merge_check: what `merge` verifies about an attached foreign database before it copies
 * a row (db/merge.c; internal to db/). A file that passes the store's own classification
 * (ocbench's tables, this schema version) may still have been edited by hand or by a
 * hostile tool: a table missing a column, a run uuid or machine fingerprint repeated,
 * NULL where the schema forbids it. Each is bad input, refused as one OCB_EFORMAT line
 * naming the file, before the merge transaction begins. */
#ifndef OCB_MERGE_CHECK_H
#define OCB_MERGE_CHECK_H

#include <sqlite3.h>

/* Checks schema `other` (attached on db) against main's tables. OCB_OK, OCB_EFORMAT
 * ("PATH: table run has no column 'uuid'", "PATH: run uuid 'x' appears 2 times"),
 * OCB_EDB if a check itself cannot run. */
int ocb_merge_check_other(sqlite3 *db, const char *other, const char *path);

#endif

/* ocb_db: the store's whole interface, the one header readers and writers outside db/
 * need (SQLite's sqlite3.h is the model). db/ is the only code that speaks SQL: no
 * sqlite3 type or call appears outside this folder (tests that open a database to
 * check it excepted).
 *
 * Handle   struct ocb_store is opaque: ocb_store_open() / ocb_store_close() (store.h).
 * Codes    every function returns OCB_OK (0) or a negative OCB_E* (common/ocb_error.h)
 *          with the detail in ocb_lasterr(); OCB_ENOENT (not there), OCB_EINVAL (bad
 *          spec), OCB_ENOMEM, OCB_EDB (SQLite said no), OCB_ENOTOURS / OCB_ENEWER on open.
 * Ownership each declaration says what the caller owns and how it is released
 *          (x_release(NULL) and x_free(NULL) are no-ops); on error an output owns nothing.
 * Rows     records.h holds the structs of the rows (machine, ceiling, result, run); the
 *          result columns are listed once, in result_row.h (internal), which converts a
 *          row <-> struct ocb_result for every insert, load, export and merge.
 *
 * The parts, by what they answer:
 *   store.h       open/close, writes: machine, run begin/finish, result (+ samples and
 *                 counters, atomically), metric, workload identity, ceilings; groups
 *                 (begin/commit/rollback); the current ceilings of a machine
 *   store_query.h resolve a run spec; load one result or one run; find a machine
 *   select.h      the report's reads over a selection of runs: results (ocb_rrow),
 *                 ceilings per machine, covered runs, counters, metrics (filtered,
 *                 with workload identities), final training metrics
 *   pairs.h       compare/history: result pairs of two runs, unpaired cases, samples,
 *                 a case's medians over earlier runs, a case's history series
 *   run_dump.h    one run whole (export): run/machine rows, results with samples and
 *                 counters, run context, metrics
 *   rows.h        listings for runs, machines and show, read by column name
 *   import.h      Google Benchmark JSON -> a new run (a writer)
 *   merge.h       another ocbench database -> this one (a writer)
 *   run_live.h    the status a reader shows for a run ('running' whose process died) */
#ifndef OCB_DB_H
#define OCB_DB_H

#include "import.h"
#include "merge.h"
#include "pairs.h"
#include "records.h"
#include "rows.h"
#include "run_dump.h"
#include "run_live.h"
#include "select.h"
#include "store.h"
#include "store_query.h"

#endif

/* machine_get: see machine_get.h. */
#include "machine_get.h"
#include "store_int.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"

static void col_text(sqlite3_stmt *st, int i, char *dst, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	snprintf(dst, len, "%s", t ? (const char *)t : "");
}

int ocb_store_machine_get(struct ocb_store *s, int64_t id, const char *fp,
			  struct ocb_machine *out, int64_t *id_out)
{
	sqlite3 *db = ocb_store_handle(s);
	sqlite3_stmt *st = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	const char *sql =
		"SELECT id, fingerprint, hostname, cpu_model, isa, cores, threads, l1d_bytes,"
		" l2_bytes, l3_bytes, mem_bytes, os, compiler, blas, papi_version, is_vm"
		" FROM machine WHERE (?1 > 0 AND id = ?1) OR (?1 <= 0 AND fingerprint = ?2)";
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return ocb_seterr(OCB_EDB, "%s: %s", ocb_store_path(s), sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, fp ? fp : "", -1, SQLITE_TRANSIENT);
	int step = sqlite3_step(st);
	if (step == SQLITE_DONE) {
		rc = id > 0 ? ocb_seterr(OCB_ENOENT, "no machine %lld in %s", (long long)id,
					 ocb_store_path(s))
			    : ocb_seterr(OCB_ENOENT, "this machine (%.12s) is not in %s",
					 fp ? fp : "", ocb_store_path(s));
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = ocb_seterr(OCB_EDB, "%s: %s", ocb_store_path(s), sqlite3_errmsg(db));
		goto out;
	}
	if (id_out)
		*id_out = sqlite3_column_int64(st, 0);
	col_text(st, 1, out->fingerprint, sizeof out->fingerprint);
	col_text(st, 2, out->hostname, sizeof out->hostname);
	col_text(st, 3, out->cpu_model, sizeof out->cpu_model);
	col_text(st, 4, out->isa, sizeof out->isa);
	out->cores = sqlite3_column_int(st, 5);
	out->threads = sqlite3_column_int(st, 6);
	out->l1d_bytes = sqlite3_column_int64(st, 7);
	out->l2_bytes = sqlite3_column_int64(st, 8);
	out->l3_bytes = sqlite3_column_int64(st, 9);
	out->mem_bytes = sqlite3_column_int64(st, 10);
	col_text(st, 11, out->os, sizeof out->os);
	col_text(st, 12, out->compiler, sizeof out->compiler);
	col_text(st, 13, out->blas, sizeof out->blas);
	col_text(st, 14, out->papi_version, sizeof out->papi_version);
	out->is_vm = sqlite3_column_int(st, 15);
	out->llc_bytes = 0; /* a measurement: the 'cap_llc' ceiling, not a machine column */
	rc = OCB_OK;
out:
	sqlite3_finalize(st);
	return rc;
}

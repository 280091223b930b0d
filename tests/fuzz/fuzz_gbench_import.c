/* fuzz_gbench_import: `ocbench import FILE` — a Google Benchmark JSON file through
 * ocb_import_gbench (db/import.h) into a real store, then the imported run read back as
 * `export` does (all three formats to /dev/null), so what import accepts is also what
 * the readers survive. The store lives in the scratch folder and is recreated every
 * 256 inputs so it stays small. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../db/import.h"
#include "../../report/export.h"
#include "fuzz_util.h"

static struct ocb_store *store;
static int64_t machine_id;
static char dbpath[256];
static unsigned uses;

static int reopen(void)
{
	struct ocb_machine m;

	ocb_store_close(store);
	store = NULL;
	snprintf(dbpath, sizeof dbpath, "%s/import.db", fuzz_scratch());
	fuzz_unlink_db(dbpath);
	if (ocb_store_open(dbpath, OCB_STORE_WRITE, &store))
		return -1;
	memset(&m, 0, sizeof m);
	strcpy(m.fingerprint, "f0f0f0f0");
	strcpy(m.hostname, "fuzz");
	return ocb_store_machine(store, &m, &machine_id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ocb_import_opts o = {0};
	int64_t run_id;
	char path[32];
	FILE *null;
	int fd;

	if ((uses++ % 256 == 0 || !store) && reopen())
		return 0;
	fd = fuzz_memfile(data, size, path);
	if (fd < 0)
		return 0;
	o.machine_id = machine_id;
	o.version = "fuzz";
	if (fuzz_note("import", ocb_import_gbench(store, path, &o, &run_id, NULL)) == 0 &&
	    (null = fopen("/dev/null", "w"))) {
		ocb_export_run(store, run_id, OCB_EXPORT_GBENCH, null);
		ocb_export_run(store, run_id, OCB_EXPORT_CSV, null);
		ocb_export_run(store, run_id, OCB_EXPORT_JSON, null);
		fclose(null);
	}
	close(fd);
	return 0;
}

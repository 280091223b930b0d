/* machine_roof: see machine_roof.h. */
#include "machine_roof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collect/ceiling_llc.h"
#include "../collect/host.h"
#include "../common/ocb_error.h"
#include "../db/machine_get.h"

int cli_machine_roof(const struct ocb_global *g, const char *cmd, long machine,
		     struct ocb_roof_ceil **rc_out, struct ocb_ceiling **c_out, size_t *n,
		     struct ocb_roof_caches *caches, char *what, size_t len)
{
	struct ocb_store *s = NULL;
	struct ocb_machine m;
	int64_t id = 0;
	int rc, ec = 0;
	*n = 0;
	if (!machine && access(g->db_path, R_OK) != 0)
		return 0; /* no database: static analysis only */
	if ((rc = ocb_store_open(g->db_path, OCB_STORE_READ, &s)) != OCB_OK)
		return machine ? cli_fail(cmd, rc) : 0;
	char fp[sizeof m.fingerprint] = "";
	if (!machine) {
		ocb_host_probe(&m);
		memcpy(fp, m.fingerprint, sizeof fp);
	}
	rc = ocb_store_machine_get(s, machine, fp, &m, &id);
	if (rc == OCB_OK)
		rc = ocb_store_ceilings_get(s, id, c_out, n);
	if (rc) {
		ec = machine || rc != OCB_ENOENT ? cli_fail(cmd, rc) : 0;
		goto out;
	}
	if (*n && !(*rc_out = calloc(*n, sizeof **rc_out))) {
		ec = cli_fail(cmd, ocb_seterr(OCB_ENOMEM, "ceilings"));
		goto out;
	}
	ocb_ceiling_view(*c_out, *n, *rc_out);
	ocb_machine_use_llc(&m, *c_out, *n);
	ocb_machine_caches(&m, caches);
	snprintf(what, len, "machine %lld (%s, %s)", (long long)id, m.hostname, m.cpu_model);
out:
	ocb_store_close(s);
	return ec;
}


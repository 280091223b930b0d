/* machine_roof: the ceilings and caches of a machine of the database as the roofline
 * reads them (common/ocb_roofline.h), for the commands that predict (inspect, plan). */
#ifndef OCB_MACHINE_ROOF_H
#define OCB_MACHINE_ROOF_H

#include <stddef.h>

#include "../db/records.h"
#include "cli.h"

/* Machine `machine` (> 0), or this machine (0: by its fingerprint), of g's database.
 * *rc_out (views, the caller frees) over *c_out (rows, the caller frees), *n of them,
 * the machine's caches and a label "machine 3 (host, cpu)" in what. *n = 0 without a
 * database, without this machine in it, or without ceilings: a static analysis then.
 * Returns 0, or the exit code after one line on stderr (an unknown --machine, a broken
 * database). */
int cli_machine_roof(const struct ocb_global *g, const char *cmd, long machine,
		     struct ocb_roof_ceil **rc_out, struct ocb_ceiling **c_out, size_t *n,
		     struct ocb_roof_caches *caches, char *what, size_t len);

#endif

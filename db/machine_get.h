/* machine_get: one machine row by id or by fingerprint (what `inspect --machine` and
 * `plan` predict for). The typed query; callers never see SQL. */
#ifndef OCB_MACHINE_GET_H
#define OCB_MACHINE_GET_H

#include <stdint.h>

#include "records.h"
#include "store.h"

/* Machine `id` (> 0), or, with id <= 0, the machine whose fingerprint is `fp`, into *out
 * and its id into *id_out (may be NULL). OCB_ENOENT "no machine N in PATH" when absent,
 * OCB_EDB on an SQLite failure. */
int ocb_store_machine_get(struct ocb_store *s, int64_t id, const char *fp,
			  struct ocb_machine *out, int64_t *id_out);

#endif

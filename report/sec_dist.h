/* sec_dist: the distributed suite's report section (issue 12); see sec_dist.c. */
#ifndef OCB_SEC_DIST_H
#define OCB_SEC_DIST_H

#include "rctx.h"

/* Adds the distributed tables and the scaling plot to x when the selection holds
 * dist_coll / dist_train metrics; nothing otherwise. OCB_ENOMEM, OCB_EDB. */
int ocb_rsec_dist(struct ocb_rctx *x);

#endif

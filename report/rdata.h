/* rdata: arithmetic on what the report reads (db/select.h): units, achieved rates and
 * the fraction of the roofline bound of a result row. Pure functions. */
#ifndef OCB_RDATA_H
#define OCB_RDATA_H

#include "../db/select.h"

/* Seconds per unit for a time unit ("s", "ms", "us", "ns"); 0 for anything else. */
double ocb_unit_seconds(const char *unit);

/* Achieved GFLOP/s of a row (flops / median seconds / 1e9); NaN if not a time unit. */
double ocb_rrow_gflops(const struct ocb_rrow *r);
/* Achieved GB/s of a row. */
double ocb_rrow_gbs(const struct ocb_rrow *r);
/* Fraction of the roof: the stored bound_frac if present, else the roofline module's
 * ocb_roof_frac of the stored bound with the machine's ceilings (mc may be NULL -> NaN;
 * a bound whose roof was never measured -> NaN, "no roof"). */
double ocb_rrow_roof_frac(const struct ocb_rrow *r, const struct ocb_mceil *mc);

#endif

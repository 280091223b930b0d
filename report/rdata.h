/* rdata: arithmetic on what the report reads (db/select.h): units, achieved rates and
 * the fraction of the roofline bound of a result row. Pure functions. */
#ifndef OCB_RDATA_H
#define OCB_RDATA_H

#include <cJSON.h>

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

/* A parameter's value as text: numbers %.10g, strings as they are, anything else its
 * compact JSON ("?" for NULL). */
void ocb_param_text(const cJSON *e, char *buf, size_t len);
/* Canonical params JSON as words "k=512 m=1024 format=q4_0" (the JSON itself when it
 * does not parse) into buf. */
void ocb_params_words(const char *json, char *buf, size_t len);

#endif

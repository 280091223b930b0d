/* sigfig: how many digits a measured number deserves. A value is printed to the decimal
 * place of the first significant digit of its 95% CI half-width (the usual rule for
 * "value +- uncertainty": 27.43 with CI +-0.3 prints "27.4", with +-3 prints "27"), so a
 * table never shows noise digits (no 0.0002576 when the CI is 2%). A value without a CI
 * gets `sig` significant digits. Never an exponent for 1e-4 <= |v| < 1e9; pure. */
#ifndef OCB_SIGFIG_H
#define OCB_SIGFIG_H

#include <stddef.h>

/* Formats v into buf ("" when v is NaN). lo/hi: the CI in v's unit (NaN: none); sig: the
 * significant digits without a CI (>= 1). The shown digits are at least 2 significant;
 * a CI gives at most 6. An integer shown with sig >= its digits is exact. Returns buf. */
char *ocb_sigfig(double v, double lo, double hi, int sig, char *buf, size_t len);

/* The time unit that shows `seconds` (the typical magnitude of a column) with 1-3 digits
 * before the point: "s", "ms", "us" or "ns"; *scale = units per second. */
const char *ocb_time_unit(double seconds, double *scale);

#endif

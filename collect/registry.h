/* registry: the table of suites. Adding a suite is one line in registry.c. */
#ifndef OCB_REGISTRY_H
#define OCB_REGISTRY_H

#include "bench.h"

extern const struct ocb_suite *const ocb_suites[];
extern const size_t ocb_nsuites;

/* The suite named `name`, or NULL. */
const struct ocb_suite *ocb_suite_find(const char *name);

#endif

#include "registry.h"

#include <string.h>

extern const struct ocb_suite ocb_suite_baseline;
extern const struct ocb_suite ocb_suite_train;
extern const struct ocb_suite ocb_suite_quant;

/* One line per suite; `--suite all` runs them in this order. */
const struct ocb_suite *const ocb_suites[] = {
	&ocb_suite_baseline,
	&ocb_suite_train,
	&ocb_suite_quant,
};
const size_t ocb_nsuites = sizeof ocb_suites / sizeof ocb_suites[0];

const struct ocb_suite *ocb_suite_find(const char *name)
{
	for (size_t i = 0; i < ocb_nsuites; i++)
		if (strcmp(ocb_suites[i]->name, name) == 0)
			return ocb_suites[i];
	return NULL;
}

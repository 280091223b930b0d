/* params: the parameter contract of a benchmark (issue 9). Each bench declares its
 * parameters once in a table of struct ocb_param; the runner validates every case against
 * it (unknown key, wrong type, out of range), fills the defaults once and hands setup()
 * and work() the same filled object, read through the typed getters below. */
#ifndef OCB_PARAMS_H
#define OCB_PARAMS_H

#include <cJSON.h>
#include <stdio.h>

enum ocb_ptype {
	OCB_P_INT,     /* a whole JSON number in [min, max] */
	OCB_P_FLOAT,   /* a JSON number in [min, max] */
	OCB_P_STRING,  /* any JSON string */
	OCB_P_ENUM,    /* a JSON string out of `values` */
	OCB_P_INTLIST, /* a non-empty array of whole numbers, each in [min, max] */
};

struct ocb_param {
	const char *name;
	enum ocb_ptype type;
	/* The default as JSON text ("4096", "\"q4_0\"", "[784,512]"), filled in when a case
	 * leaves the key out; NULL: none (the bench derives it from other values, say how in
	 * `doc`, and reads the key with the *_or getters). */
	const char *dflt;
	double min, max;             /* INT, FLOAT, INTLIST: inclusive range */
	const char *const *values;   /* ENUM: NULL-terminated allowed values */
	const char *unit;            /* "elements", "s", "1" ...; "" for none */
	const char *doc;             /* one line for `ocbench run --describe` */
};

/* Checks `case_` (a JSON object) against the NULL-name-terminated table `decl`.
 * On success *full is a new object (caller cJSON_Delete()s) holding the case's keys and
 * every declared default it leaves out. On failure returns OCB_EINVAL with
 * ocb_lasterr() "<where>: bench <bench>: key <key>: <why>"; `where` names the source
 * ("examples/suites/x.json cases[2].params" or "suite baseline"). */
int ocb_params_check(const struct ocb_param *decl, const char *bench, const char *where,
		     const cJSON *case_, cJSON **full);

/* The declaration of `key` in `decl`, or NULL. */
const struct ocb_param *ocb_param_find(const struct ocb_param *decl, const char *key);

/* Typed reads of a checked, defaults-filled object. A key the bench declared with a
 * default is always present there; for one without, the _or forms give `dflt`. */
long ocb_pint(const cJSON *p, const char *key);
long ocb_pint_or(const cJSON *p, const char *key, long dflt);
double ocb_pfloat(const cJSON *p, const char *key);
double ocb_pfloat_or(const cJSON *p, const char *key, double dflt);
const char *ocb_pstr(const cJSON *p, const char *key); /* borrowed; "" if absent */

/* Prints the table as `ocbench run --describe` does: one line per parameter. */
void ocb_params_describe(FILE *f, const struct ocb_param *decl);

#endif

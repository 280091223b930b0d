#include "cli.h"

#include <cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ocbench: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

int cli_fail(const char *cmd, int status)
{
	const char *d = ocb_lasterr();
	fprintf(stderr, "ocbench: %s: %s\n", cmd, d && *d ? d : ocb_strerror(status));
	return ocb_exit_code(status);
}

int cli_print_json(const char *cmd, struct cJSON *j, int compact)
{
	char *text = !j ? NULL : compact ? cJSON_PrintUnformatted(j) : cJSON_Print(j);
	int ok = text && puts(text) >= 0 && fflush(stdout) == 0; /* a buffered write fails here */
	cJSON_free(text);
	cJSON_Delete(j);
	if (ok)
		return 0;
	return cli_fail(cmd, text ? ocb_seterr(OCB_EIO, "writing the JSON to stdout")
				  : ocb_seterr(OCB_ENOMEM, "JSON output"));
}

int cli_bad_option(const char *cmd, int argc, char **argv)
{
	const char *opt = optind - 1 < argc && optind >= 1 ? argv[optind - 1] : "?";
	if (optopt && optopt != '?' && strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", optopt))
		return cli_usage_error(cmd, "bad option -%c (see 'ocbench %s --help')", optopt, cmd);
	return cli_usage_error(cmd, "bad option '%s' (see 'ocbench %s --help')", opt, cmd);
}

int cli_open_store(const struct ocb_global *g, const char *cmd, enum ocb_store_mode mode,
		   struct ocb_store **out)
{
	int rc = ocb_store_open(g->db_path, mode, out);
	if (rc != OCB_OK) {
		*out = NULL;
		return cli_fail(cmd, rc);
	}
	return 0;
}

int cli_parse_long(const char *cmd, const char *opt, const char *s, long lo, long hi, long *out)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || !end || end == s || *end || v < lo || v > hi)
		return cli_usage_error(cmd, "%s wants a whole number from %ld to %ld, not '%s'", opt,
				       lo, hi, s);
	*out = v;
	return 0;
}

int cli_parse_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
		     double *out)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	int pct = end && *end == '%' && end[1] == '\0';
	if (pct) {
		v /= 100.0;
		end++;
	}
	if (errno || !end || end == s || *end || !(v >= lo && v <= hi))
		return cli_usage_error(cmd, "%s wants a number from %g to %g, not '%s'", opt, lo, hi, s);
	*out = v;
	return 0;
}

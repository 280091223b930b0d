/* `ocbench events`: what PAPI can count here, and the state of each event ocbench
 * records (or of a list given with --events). Each event is opened and counted once
 * (start/stop) so "available: yes" means it was really counted, not only named. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/counters.h"
#include "../common/ocb_error.h"
#include "cli.h"

static void events_usage(FILE *f)
{
	fprintf(f,
		"usage: ocbench events [--events LIST] [--no-papi] [--json]\n\n"
		"Prints the PAPI version and status, then for each event whether it can be\n"
		"counted on this machine and, if not, PAPI's reason; then how many preset and\n"
		"native events this machine offers.\n\n"
		"  --events LIST  comma-separated PAPI event names (default: the events that\n"
		"                 'ocbench run' records; 'A|B' counts B when A is missing)\n"
		"  --no-papi      do not use PAPI (every event unavailable)\n"
		"  --json         one JSON object on stdout\n");
}

/* Splits the comma-separated list in s (modified) into names[] (at most max). Returns
 * the count, or -1 for an empty item. */
static int split_list(char *s, const char **names, int max)
{
	int n = 0;
	for (char *tok = s;; ) {
		char *comma = strchr(tok, ',');
		if (comma)
			*comma = '\0';
		while (*tok == ' ')
			tok++;
		size_t l = strlen(tok);
		while (l > 0 && tok[l - 1] == ' ')
			tok[--l] = '\0';
		if (l == 0 || n >= max)
			return -1;
		names[n++] = tok;
		if (!comma)
			break;
		tok = comma + 1;
	}
	return n;
}

/* The probe as one JSON object on stdout. */
static int print_json(const struct ocb_counters_probe *p, const char *const *names, int n)
{
	const struct ocb_papi_info *info = &p->info;
	int rc = 0;
	cJSON *root = cJSON_CreateObject();
	cJSON *papi = cJSON_AddObjectToObject(root, "papi");
	cJSON *evs = cJSON_AddArrayToObject(root, "events");
	if (!papi || !evs) {
		rc = cli_fail("events", ocb_seterr(OCB_ENOMEM, "JSON output"));
		goto out;
	}
	cJSON_AddBoolToObject(papi, "initialised", info->ok);
	cJSON_AddStringToObject(papi, "version", info->ok ? info->version : "");
	cJSON_AddStringToObject(papi, "header_version", info->header_version);
	cJSON_AddStringToObject(papi, "status", info->ok ? ocb_counters_status(p->ctr)
							 : info->status);
	cJSON_AddStringToObject(papi, "disabled_components", info->disabled);
	cJSON_AddBoolToObject(papi, "multiplexed", ocb_counters_multiplexed(p->ctr));
	for (int i = 0; i < n; i++) {
		cJSON *e = cJSON_CreateObject();
		if (!e || !cJSON_AddItemToArray(evs, e)) {
			cJSON_Delete(e);
			rc = cli_fail("events", ocb_seterr(OCB_ENOMEM, "JSON output"));
			goto out;
		}
		cJSON_AddStringToObject(e, "event", p->vals[i].event);
		cJSON_AddStringToObject(e, "requested", names[i]);
		cJSON_AddBoolToObject(e, "available", p->vals[i].available);
		if (p->vals[i].available)
			cJSON_AddNullToObject(e, "reason");
		else
			cJSON_AddStringToObject(e, "reason", p->vals[i].reason);
	}
	cJSON_AddNumberToObject(root, "presets_available", info->npreset);
	cJSON_AddNumberToObject(root, "presets_known", info->npreset_known);
	cJSON_AddNumberToObject(root, "native_events", info->nnative);
	cJSON_AddNumberToObject(root, "components_enabled", info->ncomponents);
	cJSON_AddNumberToObject(root, "hardware_counters", info->hw_counters);
	char *s = cJSON_PrintUnformatted(root);
	if (!s) {
		rc = cli_fail("events", ocb_seterr(OCB_ENOMEM, "JSON output"));
		goto out;
	}
	printf("%s\n", s);
	cJSON_free(s);
out:
	cJSON_Delete(root);
	return rc;
}

/* The probe as text: PAPI facts, one line per event, the machine's totals. */
static void print_text(const struct ocb_counters_probe *p, int n)
{
	const struct ocb_papi_info *info = &p->info;
	const struct ocb_counter_val *vals = p->vals;
	if (info->ok)
		printf("PAPI %s (built against %s)\n", info->version, info->header_version);
	else
		printf("PAPI off: %s\n", info->status);
	if (info->ok && ocb_counters_status(p->ctr)[0])
		printf("status: %s\n", ocb_counters_status(p->ctr));
	if (info->disabled[0])
		printf("disabled components: %s\n", info->disabled);
	if (ocb_counters_multiplexed(p->ctr))
		printf("multiplexed: yes (more events than hardware counters)\n");
	int w = 5;
	for (int i = 0; i < n; i++)
		if ((int)strlen(vals[i].event) > w)
			w = (int)strlen(vals[i].event);
	printf("\n%-*s  %-9s  %s\n", w, "event", "available", "reason");
	for (int i = 0; i < n; i++)
		printf("%-*s  %-9s  %s\n", w, vals[i].event, vals[i].available ? "yes" : "no",
		       vals[i].available ? "" : vals[i].reason);
	if (info->ok)
		printf("\nthis machine: %d of %d PAPI presets countable, %d native events "
		       "(%d component%s enabled, %d hardware counters)\n",
		       info->npreset, info->npreset_known, info->nnative, info->ncomponents,
		       info->ncomponents == 1 ? "" : "s", info->hw_counters);
}

int cmd_events(const struct ocb_global *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{"events", required_argument, NULL, 'e'},
		{"no-papi", no_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *list = NULL;
	int no_papi = 0, c, rc = 0, n = 0;
	char *copy = NULL;
	const char *names[256];
	struct ocb_counters_probe p = {0};

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'e': list = optarg; break;
		case 'N': no_papi = 1; break;
		case 'h': events_usage(stdout); return 0;
		case ':':
			return cli_usage_error("events", "%s needs a value (see 'ocbench events --help')",
					       argv[optind - 1]);
		default: return cli_bad_option("events", argc, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("events", "unexpected argument '%s' (see 'ocbench events --help')",
				       argv[optind]);

	if (list) {
		copy = strdup(list);
		if (!copy) {
			rc = cli_fail("events", ocb_seterr(OCB_ENOMEM, "event list"));
			goto out;
		}
		n = split_list(copy, names, (int)(sizeof names / sizeof names[0]));
		if (n < 0) {
			rc = cli_usage_error("events", "--events wants comma-separated names, not '%s'",
					     list);
			goto out;
		}
	} else {
		while (ocb_default_events[n])
			names[n] = ocb_default_events[n], n++;
	}
	int st = ocb_counters_probe(names, n, no_papi, &p);
	if (st == OCB_EINVAL)
		rc = cli_usage_error("events", "%s", ocb_lasterr());
	else if (st != OCB_OK)
		rc = cli_fail("events", st);
	else if (g->json)
		rc = print_json(&p, names, n);
	else
		print_text(&p, n);
out:
	ocb_counters_probe_free(&p);
	free(copy);
	return rc;
}

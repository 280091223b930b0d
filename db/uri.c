/* uri: SQLite "file:" URIs of paths (uri.h). */
#define _GNU_SOURCE
#include "uri.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ocb_db_uri(const char *path, const char *query)
{
	char *abs = realpath(path, NULL), *out = NULL;
	if (!abs)
		return NULL;
	size_t len = strlen(abs);
	out = malloc(len * 3 + strlen(query) + 8);
	if (out) {
		size_t o = (size_t)sprintf(out, "file:");
		for (const unsigned char *p = (const unsigned char *)abs; *p; p++) {
			if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
				out[o++] = (char)*p;
			else
				o += (size_t)sprintf(out + o, "%%%02X", *p);
		}
		sprintf(out + o, "?%s", query);
	}
	free(abs);
	return out;
}

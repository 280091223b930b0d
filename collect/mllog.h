/* mllog: MLPerf logging lines (REFERENCE.md §4): one `:::MLLOG {json}` line per event,
 * written with cJSON. One writer per file; each rank writes its own file. */
#ifndef OCB_MLLOG_H
#define OCB_MLLOG_H

#include <cJSON.h>
#include <stdio.h>

struct ocb_mllog;

/* Opens (truncates) `path`. Errors: OCB_EPERM/OCB_EIO with the path in the detail. */
int ocb_mllog_open(const char *path, struct ocb_mllog **out);
/* Writes to an already-open stream (tests); the stream stays the caller's. */
struct ocb_mllog *ocb_mllog_from_stream(FILE *f);
void ocb_mllog_close(struct ocb_mllog *l);

enum ocb_mllog_type { OCB_MLLOG_START, OCB_MLLOG_END, OCB_MLLOG_POINT };

/* One event. value: a cJSON value consumed (owned) by the call, or NULL for null.
 * metadata: object consumed by the call, or NULL; "file"/"lineno" are added. */
int ocb_mllog_event(struct ocb_mllog *l, enum ocb_mllog_type type, const char *key,
		    cJSON *value, cJSON *metadata, const char *file, int line);

#define OCB_MLLOG(l, type, key, value, meta) \
	ocb_mllog_event((l), (type), (key), (value), (meta), __FILE__, __LINE__)

/* cache_clear (required by the MLPerf HPC rules): ocbench does not drop the OS page
 * cache (that needs root and disturbs every other process on the machine), so it logs
 * the value false: the dataset may have been read from cache. */
#define OCB_MLLOG_CACHE_CLEAR(l) \
	OCB_MLLOG((l), OCB_MLLOG_POINT, "cache_clear", cJSON_CreateFalse(), NULL)

#endif

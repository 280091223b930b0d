/* uri: SQLite "file:" URIs of paths (internal to db/). */
#ifndef OCB_DB_URI_H
#define OCB_DB_URI_H

/* "file:" URI of path made absolute, percent-encoding all but unreserved characters and
 * '/' (RFC 3986; SQLite "URI filenames"), then "?" and `query` ("mode=ro",
 * "immutable=1"). malloc'd (caller frees); NULL if the path cannot be resolved or on
 * no memory. Open it with SQLITE_OPEN_URI. */
char *ocb_db_uri(const char *path, const char *query);

#endif

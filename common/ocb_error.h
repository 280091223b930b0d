/* ocb_error: the status codes every library function returns, and the one-line
 * detail message that goes with the last failure on this thread.
 *
 * Library code returns int: OCB_OK (0) or a negative OCB_E* code, and sets a detail
 * with ocb_seterr(). Only the CLI (ocbench.c, cli/) turns a status into an exit code. */
#ifndef OCB_ERROR_H
#define OCB_ERROR_H

enum ocb_status {
	OCB_OK = 0,
	OCB_EINVAL = -1,   /* bad argument or bad user input            -> exit 2 */
	OCB_EFORMAT = -2,  /* malformed file (JSON, IDX, checkpoint ...) -> exit 2 */
	OCB_ENOENT = -3,   /* a named file, run, machine does not exist -> exit 2 */
	OCB_ENOTOURS = -4, /* a file that is not an ocbench database    -> exit 2 */
	OCB_ENEWER = -5,   /* database from a newer ocbench             -> exit 2 */
	OCB_EIO = -6,      /* I/O failure at run time                    -> exit 3 */
	OCB_ENOMEM = -7,   /* allocation failed                         -> exit 3 */
	OCB_EDB = -8,      /* SQLite failure at run time                 -> exit 3 */
	OCB_ECHECK = -9,   /* a kernel disagreed with its reference     -> exit 3 */
	OCB_EUNAVAIL = -10,/* feature not available here (PAPI, AVX2)   -> exit 3 */
	OCB_ERUNTIME = -11,/* any other run-time failure                 -> exit 3 */
	OCB_EPERM = -12,   /* path not writable / permission             -> exit 2 */
};

/* Short fixed text for a status ("bad input", "malformed file", ...). Never NULL. */
const char *ocb_strerror(int status);

/* Set this thread's detail message (printf-style) and return `status`, so that
 * `return ocb_seterr(OCB_EFORMAT, "%s: bad magic 0x%x", path, m);` reads naturally. */
int ocb_seterr(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The detail of the last ocb_seterr() on this thread, or "" if none. Owned by the
 * library; valid until the next ocb_seterr() on this thread. */
const char *ocb_lasterr(void);

/* Exit code for a status: 0 ok, 2 bad usage/input, 3 run-time failure. */
int ocb_exit_code(int status);

#endif

#include "ocb_error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_detail[1024];

const char *ocb_strerror(int status)
{
	switch (status) {
	case OCB_OK: return "ok";
	case OCB_EINVAL: return "bad input";
	case OCB_EFORMAT: return "malformed file";
	case OCB_ENOENT: return "not found";
	case OCB_ENOTOURS: return "not an ocbench database";
	case OCB_ENEWER: return "database from a newer ocbench";
	case OCB_EIO: return "I/O error";
	case OCB_ENOMEM: return "out of memory";
	case OCB_EDB: return "database error";
	case OCB_ECHECK: return "result check failed";
	case OCB_EUNAVAIL: return "not available on this machine";
	case OCB_ERUNTIME: return "run-time failure";
	case OCB_EPERM: return "permission denied";
	default: return "unknown error";
	}
}

int ocb_seterr(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_detail, sizeof last_detail, fmt, ap);
	va_end(ap);
	return status;
}

const char *ocb_lasterr(void)
{
	return last_detail;
}

int ocb_exit_code(int status)
{
	switch (status) {
	case OCB_OK: return 0;
	case OCB_EINVAL: case OCB_EFORMAT: case OCB_ENOENT:
	case OCB_ENOTOURS: case OCB_ENEWER: case OCB_EPERM:
		return 2;
	default:
		return 3;
	}
}

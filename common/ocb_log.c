#include "ocb_log.h"

#include <stdarg.h>
#include <stdio.h>

int ocb_log_quiet;

void ocb_info(const char *fmt, ...)
{
	va_list ap;
	if (ocb_log_quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void ocb_warn(const char *fmt, ...)
{
	va_list ap;
	fputs("ocbench: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

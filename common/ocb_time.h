/* ocb_time: monotonic clock for timed regions, UTC ISO-8601 stamps for the store. */
#ifndef OCB_TIME_H
#define OCB_TIME_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t ocb_now_ns(void);
/* Seconds since an arbitrary origin, monotonic. */
double ocb_now_s(void);
/* Milliseconds since the Unix epoch (wall clock), as MLLOG's time_ms wants. */
int64_t ocb_epoch_ms(void);
/* Writes "YYYY-MM-DDTHH:MM:SSZ" (UTC, now) into buf (>= 21 bytes); returns buf. */
char *ocb_utc_now(char *buf, size_t len);
/* An RFC 3339 / ISO-8601 stamp "YYYY-MM-DDTHH:MM:SS" with an optional fraction and a
 * zone "Z", "+HH:MM", "-HH:MM" or "+HHMM" (none: UTC) as Unix seconds; NaN if s is not
 * such a stamp. Google Benchmark's context.date is local time with an offset. */
double ocb_iso8601_parse(const char *s);
/* Unix seconds t as "YYYY-MM-DDTHH:MM:SSZ" (UTC, whole seconds) into buf (>= 21 bytes). */
char *ocb_utc_stamp(double t, char *buf, size_t len);
/* CLOCK_THREAD_CPUTIME_ID in seconds: CPU time of the calling thread (NaN on failure). */
double ocb_thread_cpu_s(void);
/* CLOCK_PROCESS_CPUTIME_ID in seconds: CPU time of every thread of this process. */
double ocb_process_cpu_s(void);

#endif

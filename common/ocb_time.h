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

#endif

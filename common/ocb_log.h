/* ocb_log: messages on stderr. Info is silenced by --quiet; warnings are not. */
#ifndef OCB_LOG_H
#define OCB_LOG_H

extern int ocb_log_quiet;

void ocb_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ocb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

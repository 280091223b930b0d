/* serve: `ocbench run ... --serve`, the long-lived child of `ocbench ab`. It plans the
 * cases of the run's suites and filter like `run` (no store, no ceilings, no counters),
 * sets a case up once when asked and times it on request, so that a round of ab costs
 * the timed time of its cases, not their set-up (allocation, data, quantization,
 * warm-up). Protocol, one line each way (stdin requests, stdout one JSON line per
 * request, flushed):
 *
 *   at start   {"serve":1,"cases":[{"id":0,"suite":..,"bench":..,"params":{..},
 *               "threads":1,"kernel":true}, ...]}
 *   setup ID          -> {"id":ID,"status":"ok","variant":"avx2","per_call_s":..,
 *                         "batch":..,"rss_bytes":..,"setup_s":..,"checked":true,
 *                         "check_s":..,"warmup_s":..}   (set up, checked against the
 *                         reference, warmed up; on a set-up case: its numbers, no work)
 *   setup ID again    -> the same without the check and with a 20 ms warm-up
 *                         ("checked":false): for ab's re-set-ups after a restart, of a
 *                         case this build already set up, checked and timed with the
 *                         same seed (the same inputs) in an earlier process
 *   time ID REPS [MAX_S] -> {"id":ID,"status":"ok","variant":..,"n":N,"min_s":..,
 *                         "median_s":..,"samples_s":[..]}   (sets the case up first when
 *                         needed; N = REPS samples of `batch` calls, seconds per call,
 *                         or fewer (>= 1) when MAX_S seconds have passed: a host so
 *                         loaded that a sample takes 30x its warm-up time does not
 *                         make a request 30x longer)
 *   teardown ID       -> {"id":ID,"status":"ok","rss_bytes":..}
 *   quit (or EOF)     -> exit 0
 *   anything else, a bad ID or REPS, a failed set-up or run ->
 *                        {"id":ID (when known),"status":"failed"|"error","error":".."}
 *                        and the child goes on serving.
 * "failed": the case failed (setup/check/run; it stays torn down); "error": the request
 * was malformed. A build without --serve exits 2 at once ("unknown option"): ab then
 * falls back to one `run` child per block (cli/ab_exec.c). */
#ifndef OCB_SERVE_H
#define OCB_SERVE_H

#include <stdio.h>

#include "runner.h"

#define OCB_SERVE_VERSION 1
#define OCB_SERVE_MAX_REPS 100000

/* Serves requests from in to out until quit or EOF. OCB_OK, or an error that stopped it
 * before the first line (no case planned, no memory). */
int ocb_serve(const struct ocb_run_opts *o, FILE *in, FILE *out);

#endif

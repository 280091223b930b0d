/* ab_side: what BASE and CAND of `ocbench ab` name, made into an ocbench binary to run.
 *   - an executable file: used as it is (its absolute path);
 *   - otherwise a git revision of the repository in the current directory: checked out
 *     with `git worktree add --detach DIR REV` in ab's temporary folder and built with
 *     `make -j2 ocbench` there (output in DIR.build.log); the worktree is removed again by
 *     ab_side_release.
 * Also seeds each side's scratch database with this machine's ceilings (ab_scratch_seed)
 * so that the children never spend a round measuring them. */
#ifndef OCB_AB_SIDE_H
#define OCB_AB_SIDE_H

#include <limits.h>
#include <stddef.h>

#include "../db/records.h"

struct ab_side {
	char bin[PATH_MAX + 16];  /* the binary to run */
	char worktree[PATH_MAX]; /* "" unless built from a revision */
	char rev[64];            /* the commit it was built from, or "" */
};

/* Resolves `spec` for side `name` ("base", "cand") under tmpdir. Errors: OCB_EINVAL
 * (neither an executable nor a revision: bad input), OCB_ERUNTIME (git or make failed;
 * the detail names the log). */
int ab_side_resolve(const char *spec, const char *tmpdir, const char *name, struct ab_side *s);
void ab_side_release(struct ab_side *s);

/* This machine's ceilings from the store at user_db (created if missing), measured
 * there first when it has none (once per machine, as `run` does; quick: a quick sweep).
 * *c is malloc'd (caller frees), *n its length. */
int ab_user_ceilings(const char *user_db, int quick, struct ocb_ceiling **c, size_t *n);

/* Writes ceilings c[0..n) of this machine into a new scratch store at scratch_db, their
 * suspect flags cleared: a scratch store is read only by ab's children, whose timings do
 * not use the ceilings, and a flagged ceiling would be re-measured by every child. */
int ab_scratch_seed(const char *scratch_db, struct ocb_ceiling *c, size_t n);

#endif

/* data_text: a byte-level text corpus for the language model, split deterministically
 * into train and validation by record.
 *
 * Default source: the Debian package `fortunes`, every regular file directly in
 * /usr/share/games/fortunes (skipping *.dat index files, *.u8 links, hidden files and
 * subdirectories such as off/), read in byte-wise sorted name order. Records are separated
 * by lines holding only `%`. A record is its text plus its separator line, so the
 * train + val streams together hold the corpus bytes (re-ordered by split), minus bare
 * separator lines with no text before them; a file not ending in '\n' gets one.
 * Record i (0-based, counted across files in order; empty records skipped) goes to
 * validation when i % 10 == 9, else to train: a 90/10 split that never depends on a seed.
 *
 * Override: any text file. If it holds fewer than 10 `%`-records, its lines are the
 * records instead (same every-10th rule). Fewer than 10 records in all is OCB_EINVAL.
 *
 * The struct owns its two byte buffers (one allocation); ocb_text_release() frees them. */
#ifndef OCB_DATA_TEXT_H
#define OCB_DATA_TEXT_H

#include <stddef.h>

#define OCB_FORTUNES_DIR "/usr/share/games/fortunes"

struct ocb_text {
	unsigned char *train; /* [ntrain] bytes; view into block */
	size_t ntrain;
	unsigned char *val;   /* [nval] bytes; view into block */
	size_t nval;
	size_t ntrain_records, nval_records;
	size_t nfiles;        /* files read */
	char source[512];     /* directory or file the corpus came from */
	void *block;
};

/* Loads a corpus. `path`: NULL -> OCB_FORTUNES_DIR; a directory -> fortunes-style
 * directory; a regular file -> that file. On success *t is filled (caller releases).
 * Errors: OCB_ENOENT (path missing / unreadable), OCB_EINVAL (too few records, empty
 * corpus), OCB_ENOMEM, each naming the path. On failure *t holds nothing. */
int ocb_text_load(const char *path, struct ocb_text *t);

/* Splits an in-memory corpus buf[0..len) by the rules above (records by `%` lines, or
 * lines if fewer than 10). `name` is used in messages and t->source. Copies the bytes. */
int ocb_text_split(const unsigned char *buf, size_t len, const char *name, struct ocb_text *t);

/* Frees the buffers and zeroes *t; NULL-safe, idempotent. */
void ocb_text_release(struct ocb_text *t);

/* Entropy of the byte unigram distribution of buf[0..n), in nats per byte
 * (-sum p ln p). The floor a byte LM must clearly beat. 0 for n == 0. */
double ocb_text_unigram_entropy(const unsigned char *buf, size_t n);

/* Cross-entropy (nats/byte) of `eval` under the unigram distribution of `fit`, with
 * add-one smoothing over 256 symbols: what a unigram model trained on train scores on
 * val. */
double ocb_text_unigram_xent(const unsigned char *fit, size_t nfit, const unsigned char *eval,
			     size_t neval);

#endif

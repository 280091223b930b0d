/* data: the IDX loader on synthetic gzip files (good, truncated, wrong magic, wrong dims,
 * count mismatch, bad label, trailing bytes), the text corpus split, the synthetic sets,
 * and — when the Debian packages are installed — the real files' shapes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../workloads/data_idx.h"
#include "../workloads/data_synth.h"
#include "../workloads/data_text.h"
#include "cli_util.h"

static char dir[128];

static void mk(void)
{
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-data")));
}

static void rm(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(data, .init = mk, .fini = rm);

static char *p(const char *name)
{
	static char buf[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

/* writes n 28x28 images (pixel = i + k) and labels i % 10 */
static void write_good(const char *img, const char *lab, int n)
{
	uint8_t *pix = malloc((size_t)n * 784), *l = malloc((size_t)n);
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < 784; k++)
			pix[i * 784 + k] = (uint8_t)(i + k);
		l[i] = (uint8_t)(i % 10);
	}
	uint32_t di[3] = {(uint32_t)n, 28, 28}, dl[1] = {(uint32_t)n};
	cr_assert_eq(ocb_idx_write_gz(p(img), OCB_IDX_MAGIC_IMAGES, 3, di, pix, (size_t)n * 784),
		     OCB_OK);
	cr_assert_eq(ocb_idx_write_gz(p(lab), OCB_IDX_MAGIC_LABELS, 1, dl, l, (size_t)n), OCB_OK);
	free(pix);
	free(l);
}

static void expect_format_error(const char *img, const char *lab, const char *file,
				const char *why)
{
	struct ocb_idx_set s;
	int rc = ocb_idx_load(p(img), p(lab), 28, 28, 10, &s);
	cr_assert_eq(rc, OCB_EFORMAT, "rc %d (%s)", rc, ocb_lasterr());
	cr_assert_null(s.block);
	const char *e = ocb_lasterr();
	cr_assert(strstr(e, file) != NULL, "'%s' names %s", e, file);
	cr_assert(strstr(e, why) != NULL, "'%s' says '%s'", e, why);
	cr_assert(strchr(e, '\n') == NULL);
}

Test(data, idx_good_and_gather)
{
	write_good("i.gz", "l.gz", 5);
	struct ocb_idx_set s;
	cr_assert_eq(ocb_idx_load(p("i.gz"), p("l.gz"), 28, 28, 10, &s), OCB_OK, "%s",
		     ocb_lasterr());
	cr_assert_eq(s.n, 5);
	cr_assert_eq(s.dim, 784);
	cr_assert_eq(s.labels[3], 3);
	cr_assert_eq(s.pixels[2 * 784 + 10], 12);
	float x[2 * 784];
	int y[2], idx[2] = {4, 1};
	ocb_idx_gather(&s, idx, 0, 2, x, y);
	cr_assert_eq(y[0], 4);
	cr_assert_eq(y[1], 1);
	cr_assert_float_eq(x[0], 4.0f / 255.0f, 1e-7);
	cr_assert_float_eq(x[784 + 254], 255.0f / 255.0f, 1e-7);
	for (int i = 0; i < 2 * 784; i++)
		cr_assert(x[i] >= 0.0f && x[i] <= 1.0f);
	ocb_idx_gather(&s, NULL, 3, 1, x, y); /* contiguous: example 3 */
	cr_assert_eq(y[0], 3);
	cr_assert_float_eq(x[1], 4.0f / 255.0f, 1e-7);
	ocb_idx_standardize(&s);
	cr_assert(s.std > 0.0f);
	ocb_idx_gather(&s, NULL, 0, 2, x, NULL);
	double m = 0;
	for (int i = 0; i < 784; i++)
		m += x[i];
	cr_assert(fabs(m / 784) < 1.0, "standardised values are centred-ish");
	ocb_idx_release(&s);
	ocb_idx_release(&s);
}

Test(data, idx_truncated)
{
	uint8_t pix[3 * 784] = {0}, lab[4] = {0};
	uint32_t di[3] = {4, 28, 28}, dl[1] = {4};
	/* header says 4 images, 3 in the payload */
	cr_assert_eq(ocb_idx_write_gz(p("i.gz"), OCB_IDX_MAGIC_IMAGES, 3, di, pix, sizeof pix), 0);
	cr_assert_eq(ocb_idx_write_gz(p("l.gz"), OCB_IDX_MAGIC_LABELS, 1, dl, lab, 4), 0);
	expect_format_error("i.gz", "l.gz", "i.gz", "truncated: expected 3152 bytes, got 2368");
	/* labels: header 4, payload 2 */
	write_good("i.gz", "x.gz", 4);
	cr_assert_eq(ocb_idx_write_gz(p("l.gz"), OCB_IDX_MAGIC_LABELS, 1, dl, lab, 2), 0);
	expect_format_error("i.gz", "l.gz", "l.gz", "truncated: expected 12 bytes, got 10");
	/* a gzip file cut in the middle of its compressed stream */
	write_good("i.gz", "l.gz", 50);
	FILE *f = fopen(p("i.gz"), "rb");
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fclose(f);
	cr_assert_eq(truncate(p("i.gz"), n / 2), 0);
	expect_format_error("i.gz", "l.gz", "i.gz", "");
	/* header itself cut short */
	cr_assert_eq(ocb_idx_write_gz(p("i.gz"), OCB_IDX_MAGIC_IMAGES, 1, di, NULL, 0), 0);
	expect_format_error("i.gz", "l.gz", "i.gz", "truncated");
}

Test(data, idx_wrong_magic)
{
	write_good("i.gz", "l.gz", 3);
	/* labels file given as images */
	expect_format_error("l.gz", "l.gz", "l.gz", "bad IDX magic 0x00000801, expected 0x00000803");
	expect_format_error("i.gz", "i.gz", "i.gz", "bad IDX magic 0x00000803, expected 0x00000801");
	/* a plain text file (gzopen reads plain files transparently) */
	FILE *f = fopen(p("t.txt"), "w");
	fputs("hello, this is not IDX\n", f);
	fclose(f);
	expect_format_error("t.txt", "l.gz", "t.txt", "bad IDX magic");
}

Test(data, idx_wrong_dims_and_counts)
{
	uint8_t pix[2 * 32 * 32] = {0}, lab[3] = {0, 1, 2};
	uint32_t di[3] = {2, 32, 32}, dl[1] = {3};
	cr_assert_eq(ocb_idx_write_gz(p("i.gz"), OCB_IDX_MAGIC_IMAGES, 3, di, pix, sizeof pix), 0);
	cr_assert_eq(ocb_idx_write_gz(p("l.gz"), OCB_IDX_MAGIC_LABELS, 1, dl, lab, 3), 0);
	expect_format_error("i.gz", "l.gz", "i.gz", "images are 32x32, expected 28x28");
	write_good("i.gz", "l2.gz", 2); /* 2 images, 3 labels */
	expect_format_error("i.gz", "l.gz", "l.gz", "3 labels for 2 images");
}

Test(data, idx_bad_label_and_trailing)
{
	write_good("i.gz", "l.gz", 2);
	uint8_t lab[2] = {1, 10};
	uint32_t dl[1] = {2};
	cr_assert_eq(ocb_idx_write_gz(p("l.gz"), OCB_IDX_MAGIC_LABELS, 1, dl, lab, 2), 0);
	expect_format_error("i.gz", "l.gz", "l.gz", "label 10 of example 1 not in 0..9");
	uint8_t lab3[3] = {1, 2, 3};
	cr_assert_eq(ocb_idx_write_gz(p("l.gz"), OCB_IDX_MAGIC_LABELS, 1, dl, lab3, 3), 0);
	expect_format_error("i.gz", "l.gz", "l.gz", "trailing bytes");
}

Test(data, idx_missing_file)
{
	struct ocb_idx_set s;
	cr_assert_eq(ocb_fmnist_load(dir, 1, &s), OCB_ENOENT);
	cr_assert(strstr(ocb_lasterr(), "train-images-idx3-ubyte.gz"));
}

Test(data, synth_fmnist_through_real_loader)
{
	cr_assert_eq(ocb_synth_fmnist_write(dir, 200, 50, 7), OCB_OK, "%s", ocb_lasterr());
	struct ocb_idx_set tr, te;
	cr_assert_eq(ocb_fmnist_load(dir, 1, &tr), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_fmnist_load(dir, 0, &te), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(tr.n, 200);
	cr_assert_eq(te.n, 50);
	int seen[10] = {0};
	for (int i = 0; i < tr.n; i++)
		seen[tr.labels[i]]++;
	for (int c = 0; c < 10; c++)
		cr_assert(seen[c] > 0, "class %d present", c);
	ocb_idx_release(&tr);
	ocb_idx_release(&te);
}

Test(data, text_split_deterministic)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	cr_assert_eq(ocb_synth_text(3, 95, &buf, &len), OCB_OK);
	struct ocb_text a, b;
	cr_assert_eq(ocb_text_split(buf, len, "synth", &a), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_text_split(buf, len, "synth", &b), OCB_OK);
	cr_assert_eq(a.ntrain_records, (size_t)86); /* records 9, 19, ..., 89 go to val */
	cr_assert_eq(a.nval_records, (size_t)9);
	cr_assert_eq(a.ntrain + a.nval, len, "every byte lands in one split");
	cr_assert_eq(a.ntrain, b.ntrain);
	cr_assert_eq(memcmp(a.train, b.train, a.ntrain), 0);
	cr_assert_eq(memcmp(a.val, b.val, a.nval), 0);
	/* the val stream is records 9, 19, ...: it starts with the 10th record's text */
	const unsigned char *q = buf;
	for (int r = 0; r < 9; r++)
		q = (const unsigned char *)strstr((const char *)q, "\n%\n") + 3;
	cr_assert_eq(memcmp(a.val, q, 8), 0);
	cr_assert(a.val[a.nval - 2] == '%' && a.val[a.nval - 1] == '\n');
	double h = ocb_text_unigram_entropy(a.train, a.ntrain);
	cr_assert(h > 1.0 && h < log(256.0), "entropy %g nats", h);
	double x = ocb_text_unigram_xent(a.train, a.ntrain, a.val, a.nval);
	cr_assert(x >= h * 0.9 && x < h * 1.2, "xent %g vs H %g", x, h);
	ocb_text_release(&a);
	ocb_text_release(&b);
	free(buf);
}

Test(data, text_file_override_and_line_fallback)
{
	/* a plain text file without % separators: lines become records */
	FILE *f = fopen(p("t.txt"), "w");
	for (int i = 0; i < 30; i++)
		fprintf(f, "line number %d\n", i);
	fclose(f);
	struct ocb_text t;
	cr_assert_eq(ocb_text_load(p("t.txt"), &t), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(t.nval_records, (size_t)3);
	cr_assert_eq(t.ntrain_records, (size_t)27);
	cr_assert_eq(t.nfiles, (size_t)1);
	cr_assert_eq(memcmp(t.val, "line number 9\nline number 19\n", 29), 0);
	ocb_text_release(&t);
	/* too small */
	f = fopen(p("s.txt"), "w");
	fputs("one\ntwo\n", f);
	fclose(f);
	cr_assert_eq(ocb_text_load(p("s.txt"), &t), OCB_EINVAL);
	cr_assert(strstr(ocb_lasterr(), "s.txt"));
	cr_assert_eq(ocb_text_load(p("nope.txt"), &t), OCB_ENOENT);
}

Test(data, text_directory_rules)
{
	/* a fortunes-style directory: .dat, .u8, hidden files and subdirectories skipped,
	 * files in strcmp order */
	char sub[300];
	snprintf(sub, sizeof sub, "%s/off", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	const char *names[] = {"b", "a", "a.dat", "a.u8", ".hidden", "off/x"};
	for (int i = 0; i < 6; i++) {
		FILE *f = fopen(p(names[i]), "w");
		for (int r = 0; r < 10; r++)
			fprintf(f, "%s record %d\n%%\n", names[i], r);
		fclose(f);
	}
	struct ocb_text t;
	cr_assert_eq(ocb_text_load(dir, &t), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(t.nfiles, (size_t)2);
	cr_assert_eq(t.ntrain_records + t.nval_records, (size_t)20);
	cr_assert_eq(memcmp(t.train, "a record 0\n%\n", 13), 0);
	cr_assert_eq(memcmp(t.val, "a record 9\n%\nb record 9\n%\n", 26), 0);
	ocb_text_release(&t);
}

/* The real Debian data, when installed: shapes and sanity only (fast). */
Test(data, fortunes_corpus)
{
	if (access(OCB_FORTUNES_DIR, R_OK) != 0)
		cr_skip_test("fortunes not installed");
	struct ocb_text t;
	cr_assert_eq(ocb_text_load(NULL, &t), OCB_OK, "%s", ocb_lasterr());
	cr_assert(t.nfiles > 10);
	cr_assert(t.ntrain > 1000000 && t.nval > 100000, "train %zu val %zu", t.ntrain, t.nval);
	double r = (double)t.nval_records / (double)(t.nval_records + t.ntrain_records);
	cr_assert(r > 0.09 && r < 0.11);
	ocb_text_release(&t);
}

Test(data, fashion_mnist_test_split)
{
	if (access(OCB_FMNIST_DIR "/t10k-images-idx3-ubyte.gz", R_OK) != 0)
		cr_skip_test("dataset-fashion-mnist not installed");
	struct ocb_idx_set s;
	cr_assert_eq(ocb_fmnist_load(NULL, 0, &s), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(s.n, 10000);
	cr_assert_eq(s.dim, 784);
	int cnt[10] = {0};
	for (int i = 0; i < s.n; i++)
		cnt[s.labels[i]]++;
	for (int c = 0; c < 10; c++)
		cr_assert_eq(cnt[c], 1000, "balanced test set");
	ocb_idx_release(&s);
}

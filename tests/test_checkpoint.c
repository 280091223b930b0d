/* checkpoint: bit-exact round trip; corrupt, truncated, foreign, newer and padded files
 * refused with a one-line OCB_EFORMAT naming the file; shape mismatch refused; atomic save. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../workloads/checkpoint.h"
#include "cli_util.h"

static char dir[128];
static char path[256];

static void mk(void)
{
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-ckpt")));
	snprintf(path, sizeof path, "%s/m.ckpt", dir);
}

static void rm(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(checkpoint, .init = mk, .fini = rm);

static float w1[37 * 5];
static float b1[5];
static int8_t q[3 * 7];

/* Writes a 3-tensor checkpoint to `path`; w1 gets random bits incl. NaN and -0. */
static void write_sample(void)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, 9);
	for (size_t i = 0; i < sizeof w1 / 4; i++) {
		uint32_t u = (uint32_t)ocb_rng_u64(&r);
		memcpy(&w1[i], &u, 4);
	}
	w1[0] = -0.0f;
	for (int i = 0; i < 5; i++)
		b1[i] = (float)i / 3.0f;
	for (int i = 0; i < 21; i++)
		q[i] = (int8_t)(i - 10);
	cJSON *cfg = cJSON_Parse("{\"dims\":[37,5],\"act\":\"relu\"}");
	struct ocb_ckpt_tensor t[3] = {
		{.name = "fc1.w", .dtype = OCB_DT_F32, .ndim = 2, .shape = {5, 37}, .data = w1},
		{.name = "fc1.b", .dtype = OCB_DT_F32, .ndim = 1, .shape = {5}, .data = b1},
		{.name = "q", .dtype = OCB_DT_I8, .ndim = 3, .shape = {1, 3, 7}, .data = q},
	};
	cr_assert_eq(ocb_ckpt_save(path, "mlp", cfg, t, 3), OCB_OK, "%s", ocb_lasterr());
	cJSON_Delete(cfg);
}

static long file_size(const char *p)
{
	FILE *f = fopen(p, "rb");
	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fclose(f);
	return n;
}

static void patch_byte(long at, unsigned char v)
{
	FILE *f = fopen(path, "r+b");
	cr_assert_not_null(f);
	fseek(f, at, SEEK_SET);
	fputc(v, f);
	fclose(f);
}

static int read_byte(long at)
{
	FILE *f = fopen(path, "rb");
	fseek(f, at, SEEK_SET);
	int c = fgetc(f);
	fclose(f);
	return c;
}

static void expect_refused(const char *why)
{
	struct ocb_ckpt *c = (void *)1;
	cr_assert_eq(ocb_ckpt_load(path, &c), OCB_EFORMAT, "expected refusal (%s)", why);
	cr_assert_null(c);
	const char *e = ocb_lasterr();
	cr_assert(strstr(e, path) != NULL, "message names the file: %s", e);
	cr_assert(strstr(e, why) != NULL, "message '%s' says '%s'", e, why);
	cr_assert(strchr(e, '\n') == NULL);
}

Test(checkpoint, round_trip_bit_exact)
{
	write_sample();
	char tmp[300];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	cr_assert(access(tmp, F_OK) != 0, "no tmp file left behind");
	struct ocb_ckpt *c = NULL;
	cr_assert_eq(ocb_ckpt_load(path, &c), OCB_OK, "%s", ocb_lasterr());
	cr_assert_str_eq(c->kind, "mlp");
	cr_assert_eq(c->version, OCB_CKPT_VERSION);
	cr_assert_str_eq(c->config_json, "{\"act\":\"relu\",\"dims\":[37,5]}");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(c->config, "dims")), 2);
	cr_assert_eq(c->ntensors, (size_t)3);
	cr_assert_eq(ocb_ckpt_expect_kind(c, "mlp"), OCB_OK);
	cr_assert_eq(ocb_ckpt_expect_kind(c, "lm"), OCB_EFORMAT);
	cr_assert(strstr(ocb_lasterr(), "expected 'lm'"));

	float w[37 * 5], b[5];
	int8_t qq[21];
	int64_t sw[2] = {5, 37}, sb[1] = {5}, sq[3] = {1, 3, 7};
	cr_assert_eq(ocb_ckpt_read_tensor(c, "fc1.w", OCB_DT_F32, 2, sw, w), OCB_OK);
	cr_assert_eq(ocb_ckpt_read_tensor(c, "fc1.b", OCB_DT_F32, 1, sb, b), OCB_OK);
	cr_assert_eq(ocb_ckpt_read_tensor(c, "q", OCB_DT_I8, 3, sq, qq), OCB_OK);
	cr_assert_eq(memcmp(w, w1, sizeof w), 0, "bitwise equal, NaNs and -0 included");
	cr_assert_eq(memcmp(b, b1, sizeof b), 0);
	cr_assert_eq(memcmp(qq, q, sizeof qq), 0);
	const struct ocb_ckpt_tensor *t = ocb_ckpt_find(c, "fc1.b");
	cr_assert_not_null(t);
	cr_assert_eq(t->offset % 64, 0u);
	cr_assert_eq(((uintptr_t)t->data) % 64, 0u, "data views are aligned");

	/* shape / dtype mismatch and missing tensors are refused */
	int64_t bad[2] = {37, 5};
	cr_assert_eq(ocb_ckpt_read_tensor(c, "fc1.w", OCB_DT_F32, 2, bad, w), OCB_EFORMAT);
	cr_assert(strstr(ocb_lasterr(), "has shape [5,37] f32, expected [37,5] f32"), "%s",
		  ocb_lasterr());
	cr_assert(strstr(ocb_lasterr(), path));
	cr_assert_eq(ocb_ckpt_read_tensor(c, "fc1.b", OCB_DT_I32, 1, sb, b), OCB_EFORMAT);
	cr_assert_eq(ocb_ckpt_read_tensor(c, "fc9.w", OCB_DT_F32, 2, sw, w), OCB_EFORMAT);
	cr_assert(strstr(ocb_lasterr(), "no tensor 'fc9.w'"));
	ocb_ckpt_free(c);

	/* saving again gives the same bytes (deterministic format) */
	long n1 = file_size(path);
	write_sample();
	cr_assert_eq(file_size(path), n1);
}

Test(checkpoint, corrupt_byte_refused)
{
	write_sample();
	long at = file_size(path) - 40; /* inside the last tensor's data */
	patch_byte(at, (unsigned char)(read_byte(at) ^ 0x10));
	expect_refused("checksum mismatch");
}

Test(checkpoint, truncated_refused)
{
	write_sample();
	long n = file_size(path);
	cr_assert_eq(truncate(path, n - 100), 0);
	expect_refused("truncated: expected");
	cr_assert_eq(truncate(path, 10), 0); /* inside the fixed header */
	expect_refused("truncated");
}

/* Every prefix of the file, so every section boundary (fixed header, kind, config,
 * tensor count, each table entry, each tensor's data, the checksum) and every byte
 * between: refused with one line, never read past the end. */
Test(checkpoint, truncated_at_every_byte)
{
	write_sample();
	long n = file_size(path);
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	unsigned char *all = malloc((size_t)n);
	cr_assert_eq(fread(all, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	for (long keep = 0; keep < n; keep++) {
		f = fopen(path, "wb");
		cr_assert_eq(fwrite(all, 1, (size_t)keep, f), (size_t)keep);
		fclose(f);
		struct ocb_ckpt *c = (void *)1;
		cr_assert_eq(ocb_ckpt_load(path, &c), OCB_EFORMAT, "cut at %ld of %ld", keep, n);
		cr_assert_null(c);
		const char *e = ocb_lasterr();
		cr_assert_null(strchr(e, '\n'), "%s", e);
		cr_assert(strstr(e, keep < 8 ? "bad magic" : "truncated"), "cut at %ld: %s", keep, e);
	}
	free(all);
}

Test(checkpoint, trailing_bytes_refused)
{
	write_sample();
	FILE *f = fopen(path, "ab");
	fputs("xx", f);
	fclose(f);
	expect_refused("trailing bytes");
}

Test(checkpoint, foreign_file_refused)
{
	FILE *f = fopen(path, "wb");
	fputs("SQLite format 3\0 this is not a checkpoint at all", f);
	fclose(f);
	expect_refused("not an ocbench checkpoint");
	f = fopen(path, "wb"); /* empty file */
	fclose(f);
	expect_refused("not an ocbench checkpoint");
}

Test(checkpoint, newer_version_refused)
{
	write_sample();
	patch_byte(8, (unsigned char)(OCB_CKPT_VERSION + 1));
	expect_refused("version 2");
}

Test(checkpoint, missing_file)
{
	struct ocb_ckpt *c = NULL;
	cr_assert_eq(ocb_ckpt_load("/nonexistent/x.ckpt", &c), OCB_ENOENT);
	cr_assert(strstr(ocb_lasterr(), "/nonexistent/x.ckpt"));
}

Test(checkpoint, bad_tensors_not_saved)
{
	float x[2] = {1, 2};
	struct ocb_ckpt_tensor dup[2] = {
		{.name = "a", .dtype = OCB_DT_F32, .ndim = 1, .shape = {2}, .data = x},
		{.name = "a", .dtype = OCB_DT_F32, .ndim = 1, .shape = {2}, .data = x},
	};
	cr_assert_eq(ocb_ckpt_save(path, "mlp", NULL, dup, 2), OCB_EINVAL);
	cr_assert(strstr(ocb_lasterr(), "duplicate"));
	struct ocb_ckpt_tensor nd = {.name = "a", .dtype = OCB_DT_F32, .ndim = 0, .data = x};
	cr_assert_eq(ocb_ckpt_save(path, "mlp", NULL, &nd, 1), OCB_EINVAL);
	cr_assert(access(path, F_OK) != 0, "nothing written");
	/* unwritable directory: error names the path, nothing left */
	struct ocb_ckpt_tensor ok = {.name = "a", .dtype = OCB_DT_F32, .ndim = 1, .shape = {2},
				     .data = x};
	cr_assert_neq(ocb_ckpt_save("/nonexistent/dir/m.ckpt", "mlp", NULL, &ok, 1), OCB_OK);
	cr_assert(strstr(ocb_lasterr(), "/nonexistent/dir/m.ckpt"));
	/* no config: stored as {} */
	cr_assert_eq(ocb_ckpt_save(path, "mlp", NULL, &ok, 1), OCB_OK);
	struct ocb_ckpt *c = NULL;
	cr_assert_eq(ocb_ckpt_load(path, &c), OCB_OK);
	cr_assert_str_eq(c->config_json, "{}");
	ocb_ckpt_free(c);
}

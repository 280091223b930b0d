/* ocbench compress CHECKPOINT --plan FILE: the progressive pipeline of
 * workloads/compress.h on an LM checkpoint: pivot, block-wise and global refinement,
 * each stage evaluated, kept only if it improves validation, saved as a checkpoint. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/ocb_error.h"
#include "../workloads/compress.h"
#include "../analysis/model_cost_out.h"
#include "cli.h"
#include "listing.h"

#define CMD "compress"

static void help(void)
{
	printf("usage: ocbench compress CHECKPOINT --plan FILE [--out DIR] [--data PATH] [--quick]\n"
	       "                       [--block-steps N] [--global-steps N] [--lr X] [--seed N]\n"
	       "                       [--json]\n\n"
	       "Runs the progressive compression of an LM checkpoint (kind 'lm') under a plan\n"
	       "from 'ocbench plan' (or any JSON with layers [{name, method, bits, group}]):\n"
	       "  pivot   every linear quantized by GPTQ (or RTN) per the plan: deployable\n"
	       "  block   per transformer block, the fp16 group scales tuned (Adam) to minimise\n"
	       "          the block output's squared error against the fp32 teacher\n"
	       "  global  every scale tuned to minimise KL(teacher || model) of the next-byte\n"
	       "          distributions (distillation)\n"
	       "on calibration windows of the training text; each stage is evaluated on the\n"
	       "validation text (window 128, stride 64) and rejected, with the previous weights\n"
	       "restored, unless its perplexity is lower than the last accepted one. Codes and\n"
	       "zero points stay those of the pivot: bpw and bytes do not change.\n"
	       "Every stage is saved as DIR/compress_<stage>.ckpt (default DIR: ocbench-out).\n"
	       "  --quick            16 calibration windows, 64 validation windows, 15/30 steps\n"
	       "  --block-steps N    Adam steps per block (default 40; 0 skips the stage)\n"
	       "  --global-steps N   Adam steps of the global stage (default 80; 0 skips)\n"
	       "  --lr X             Adam step on log(scale) (default 0.002)\n"
	       "  --data PATH        the text corpus (default: the fortunes package)\n");
}

struct compress_cli {
	const char *ckpt, *plan, *out, *data;
	struct compress_opts o;
	int json;
};

static int parse(const struct ocb_global *g, int argc, char **argv, struct compress_cli *c)
{
	static const struct option opts[] = {
		{"plan", required_argument, NULL, 'p'},  {"out", required_argument, NULL, 'o'},
		{"data", required_argument, NULL, 'd'},  {"quick", no_argument, NULL, 'q'},
		{"block-steps", required_argument, NULL, 'B'},
		{"global-steps", required_argument, NULL, 'G'},
		{"lr", required_argument, NULL, 'l'},    {"seed", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},        {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	long bs = -1, gs = -1, seed = 1;
	double lr = -1;
	int ch, rc = 0, quick = 0;
	memset(c, 0, sizeof *c);
	c->out = "ocbench-out";
	c->json = g->json;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":p:o:d:qB:G:l:s:jh", opts, NULL)) != -1) {
		switch (ch) {
		case 'p': c->plan = optarg; break;
		case 'o': c->out = optarg; break;
		case 'd': c->data = optarg; break;
		case 'q': quick = 1; break;
		case 'B': rc = cli_parse_long(CMD, "--block-steps", optarg, 0, 100000, &bs); break;
		case 'G': rc = cli_parse_long(CMD, "--global-steps", optarg, 0, 100000, &gs); break;
		case 'l': rc = cli_parse_double(CMD, "--lr", optarg, 1e-9, 10, &lr); break;
		case 's': rc = cli_parse_long(CMD, "--seed", optarg, 0, 1l << 62, &seed); break;
		case 'j': c->json = 1; break;
		case 'h': help(); return -1;
		default: return cli_bad_option(CMD, argc, argv);
		}
		if (rc)
			return rc;
	}
	if (argc - optind != 1)
		return cli_usage_error(CMD, "wants one CHECKPOINT (see 'ocbench compress --help')");
	if (!c->plan)
		return cli_usage_error(CMD, "--plan FILE is required (see 'ocbench plan')");
	c->ckpt = argv[optind];
	compress_opts_default(&c->o);
	if (quick) {
		c->o.calib_windows = 16, c->o.eval_windows = 64;
		c->o.block_steps = 15, c->o.global_steps = 30;
	}
	if (bs >= 0)
		c->o.block_steps = (int)bs;
	if (gs >= 0)
		c->o.global_steps = (int)gs;
	if (lr > 0)
		c->o.lr = (float)lr;
	c->o.seed = (uint64_t)seed;
	return 0;
}

static void print_stages(const struct compress_stage *st)
{
	char b[32], r[32], t[32];
	double pivot = st[CS_PIVOT].val_ppl;
	printf("%-7s %9s %9s %21s %7s %10s %9s %10s  %s\n", "stage", "val ppl", "vs pivot",
	       "calib objective", "bpw", "bytes", "time", "peak RSS", "kept");
	for (int k = 0; k < CS_NSTAGES; k++) {
		const struct compress_stage *s = &st[k];
		if (!s->ran) {
			printf("%-7s (skipped)\n", s->name);
			continue;
		}
		char obj[32] = "-", d[16] = "-";
		if (isfinite(s->calib_obj))
			snprintf(obj, sizeof obj, "%.4g -> %.4g", s->calib_obj0, s->calib_obj);
		if (k > CS_PIVOT)
			snprintf(d, sizeof d, "%+.2f%%", 100 * (s->val_ppl / pivot - 1));
		printf("%-7s %9.4f %9s %21s %7.3f %10s %9s %10s  %s\n", s->name, s->val_ppl, d, obj,
		       s->bpw, ocb_fmt_bytes(s->bytes, b, sizeof b),
		       listing_fmt_seconds(s->seconds, t, sizeof t),
		       ocb_fmt_bytes(s->peak_rss, r, sizeof r),
		       k <= CS_PIVOT ? "yes" : s->accepted ? "yes" : "no (rejected)");
	}
}

int cmd_compress(const struct ocb_global *g, int argc, char **argv)
{
	struct compress_cli c;
	struct compress_plan plan = {0};
	struct lm_model *st = NULL, *te = NULL;
	struct ocb_text text = {0};
	struct compress_stage stages[CS_NSTAGES];
	char prefix[4096];
	int ec = parse(g, argc, argv, &c), rc;
	if (ec)
		return ec < 0 ? 0 : ec;
	if ((rc = compress_plan_load(c.plan, &plan)) || (rc = lm_load(c.ckpt, 1, &st)) ||
	    (rc = lm_load(c.ckpt, 0, &te)) || (rc = ocb_text_load(c.data, &text)))
		goto out;
	if (c.o.window > st->cfg.ctx) {
		c.o.window = st->cfg.ctx;
		c.o.eval_stride = c.o.window / 2 > 0 ? c.o.window / 2 : 1;
	}
	if (mkdir(c.out, 0777) != 0 && errno != EEXIST) {
		rc = ocb_seterr(OCB_EPERM, "%s: cannot create the output folder", c.out);
		goto out;
	}
	snprintf(prefix, sizeof prefix, "%s/compress", c.out);
	c.o.out_prefix = prefix;
	if ((rc = compress_run(st, te, &text, &plan, &c.o, stages)))
		goto out;
	if (c.json) {
		ec = cli_print_json(CMD, compress_stages_json(stages), 0);
	} else {
		printf("%s under %s (%d linears): %d calibration windows of %d bytes, validation "
		       "%ld windows (stride %d)\n\n", c.ckpt, c.plan, plan.n, c.o.calib_windows,
		       c.o.window, c.o.eval_windows, c.o.eval_stride);
		print_stages(stages);
	}
out:
	if (rc)
		ec = cli_fail(CMD, rc);
	compress_plan_release(&plan);
	ocb_text_release(&text);
	lm_free(st);
	lm_free(te);
	return ec;
}

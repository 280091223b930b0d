/* bench_quant_accuracy: the accuracy half of the `quant` suite (issue 4): post-training
 * quantization of every linear layer of the fp32 MLP (Fashion-MNIST) and of the fp32
 * byte-level LM (fortunes), method x bits x group -> test accuracy / validation
 * perplexity, effective bits per weight, model bytes, quantization time, errors.
 *
 * Procedure (one case per model):
 *   1. Load the fp32 checkpoint from ctx->out_dir (artifacts mlp_fp32, lm_fp32: the train
 *      suite's train_mlp / train_lm write them and the runner runs those first; with
 *      --quick: mlp_fp32_quick.ckpt); if it is missing (the train suite did not run),
 *      train it through the trainer interface with the run's seed and save it there.
 *   2. Calibration: run the fp32 model over calibration inputs from the TRAINING data
 *      (MLP: `calib` random training images; LM: `calib_windows` random training windows
 *      of `window` bytes) and accumulate, for every linear, H = 2 X^T X of its inputs.
 *   3. For each configuration: write Q(W) (fake-quantized, dequantized fp32) into every
 *      linear from a saved fp32 copy, evaluate, move on; fp32 weights are restored at the
 *      end. Every linear is quantized (MLP: all 3; LM: q,k,v,o,gate,up,down of each block
 *      and the output head); embeddings, norms and biases stay fp32 and are counted as
 *      fp32 in model_bytes.
 *
 * Configurations (full run; --quick: MLP only and a subset):
 *   fp32                             the baseline
 *   rtn   b 4,3,2 x group 32,128,pc; b 8 g128   asymmetric grid (quant_rtn.h)
 *   gptq  b 4,3,2    x group 32,128,pc     same grid, act-order + static groups, damp 0.01,
 *                                           blocks of 128 (quant_gptq.h)
 *   q8_0 q4_0 q4_1 q3_g q2_g tq2_0 tq1_0   block formats of kernels/quant_formats.h,
 *                                           rows zero-padded to the block (quant_apply.h);
 *                                           the ggml ones quantized as ggml does
 *   <fmt>/fp16-aware                       the same five ggml formats (q8_0 only with
 *                                           --quick) with QF_ROUND_FP16_AWARE: same
 *                                           layout, the scale rounded to fp16 before the
 *                                           codes are chosen (other bytes than ggml)
 *   ternary (per tensor), ternary_row      BitNet b1.58 absmean (quant_ternary.h)
 *   mixed_rtn, mixed_gptq                  per-layer bits in {2,3,4,8} at group 128, exact
 *                                           plan (mixed_precision.h) under the storage of
 *                                           uniform 3-bit g128 of the same quantizer. Plan
 *                                           JSON: <out_dir>/quant_plan_<model>_<method>.json.
 *
 * The planner's per-layer error (param plan_err):
 *   "fisher" (default) sum_r F_r (w_r - q_r)^T H (w_r - q_r) / 2: the calibration output
 *            error ||X W^T - X Q^T||^2 of every output channel r, weighted by the diagonal
 *            empirical Fisher of that output, F_r = sum over calibration rows of
 *            (dLoss/dy_r)^2 (one backward pass; BRECQ, Li et al. ICLR 2021, weights output
 *            reconstruction the same way). Plain output error treats a unit of error in a
 *            query projection like one in the logits; measured here it did: the plain-output
 *            GPTQ plan lost to uniform 3-bit on the LM, the Fisher-weighted one beats it.
 *   "output" the same without F: OneComp's output-aware error, with the full H instead of
 *            its diagonal (GPTQ trades diagonal error for cancellation: the diagonal form
 *            misjudges it).
 *   "probe"  output error scaled per layer by a measured calibration-loss increase with
 *            only that layer at 2 bits (one extra forward pass per layer; noisier).
 * Other params: model, calib / calib_windows, window, stride, eval_windows (the first N
 * validation windows; 0 = all), fuse (1: q,k,v and gate,up share bits in plans), methods
 * (comma list of method or method:bits:group to run; fp32 always runs).
 *
 * METRIC NAMING CONVENTION (for the reporter). One metric row per (configuration, key):
 *   workload = "quant_acc:<model>:<method>:<bits>:<group>", step = -1
 *     <model>  mlp | lm
 *     <method> fp32 | rtn | gptq | q8_0 | q4_0 | q4_1 | q3_g | q2_g | tq2_0 | tq1_0 |
 *              <fmt>/fp16-aware (q8_0, q4_0, q4_1, tq2_0, tq1_0) | ternary | mixed_rtn |
 *              mixed_gptq
 *     <bits>   code bits: 32 (fp32), 8, 4, 3, 2, 1.58 (ternary formats/BitNet); for
 *              mixed_*: the uniform bit-width whose budget the plan meets (3)
 *     <group>  32 | 128 | pc (per output channel) for rtn/gptq/mixed; the block size
 *              (32 | 256) for block formats; tensor | row for ternary; "-" for fp32
 *   Split the workload on ':' for the table's columns. Keys (unit in the unit column):
 *     test_accuracy    (mlp) 0..1 on the 10,000 test images              unit "ratio"
 *     val_loss, val_ppl (lm) nats/byte and exp(val_loss) on the validation text,
 *                      protocol in the fp32 row: eval_window, eval_stride, eval_windows,
 *                      eval_bytes (bytes scored)                         "nats", "ppl"
 *     rel_err_vs_fp32  (metric - fp32 metric) / fp32 metric (accuracy or perplexity)
 *     acc_drop_points  (mlp) 100 * (fp32 accuracy - accuracy)            "points"
 *     effective_bpw    storage bits per weight of the quantized linears, scales, zeros
 *                      and block padding included                        "bits"
 *     model_bytes      quantized linears + everything else in fp32       "bytes"
 *     quant_time       seconds to quantize all linears (plans: all candidates + solve)
 *     weight_rel_err   sum ||W - Q||_F^2 / sum ||W||_F^2 over linears    "ratio"
 *     output_rel_err   sum ||X W^T - X Q^T||^2 / sum ||X W^T||^2 on the calibration
 *                      inputs of each linear (through H)                 "ratio"
 *     predicted_error, uniform_predicted_error (mixed_* only): the plan's summed
 *                      per-layer error and that of the uniform 3-bit assignment
 *   fp32 row also: calib_rows (rows of X per linear), calib_time, load_time, trained (1 if
 *   the checkpoint was trained in this run), nweights (weights in the linears).
 *   workload = "quant_acc_check" (no ':'): the acceptance comparisons, positive =
 *   the claim holds: <model>_gptq_gain_b<b>_g<g> (mlp: accuracy points GPTQ - RTN; lm:
 *   perplexity RTN - GPTQ), mlp_q8_0_margin_points (0.2 - the accuracy drop of Q8_0:
 *   the "within 0.2 points"), <model>_mixed_gain_<rtn|gptq> (mlp:
 *   accuracy points mixed - uniform; lm: perplexity uniform - mixed). */
#include "bench.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_log.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_time.h"
#include "../reference/data_idx.h"
#include "../reference/data_text.h"
#include "../reference/mixed_precision.h"
#include "../reference/model_lm.h"
#include "../reference/model_mlp.h"
#include "../reference/quant_apply.h"
#include "../reference/trainer_lm.h"
#include "../reference/trainer_mlp.h"
#include "artifact.h"

#define QA_MLP_BATCH 1000

enum { QA_ERR_FISHER = 0, QA_ERR_OUTPUT, QA_ERR_PROBE };
#define QA_MAXCAND 4

static const int qa_cand_bits[QA_MAXCAND] = {2, 3, 4, 8}; /* mixed-precision candidates */

struct qa_lin {
	char name[48];
	struct ocb_linear *lin;
	float *w0;      /* [out][in] the fp32 weights (view into qa_state.block) */
	float *h;       /* [in][in] 2 X^T X over the calibration rows (view) */
	double out_norm; /* ||X W^T||^2 on the calibration rows = w^T H w / 2 summed */
	double *fisher;  /* [out] sum over calibration rows of (dLoss/dy_j)^2 (view) */
	int fuse;
};

struct qa_state {
	int is_lm, quick;
	uint64_t seed;
	char out_dir[512];
	/* MLP */
	struct ocb_mlp mlp;
	int have_mlp;
	struct ocb_idx_set train, test;
	int calib;
	/* LM */
	struct lm_model *lm;
	struct ocb_text text;
	int window, stride, calib_windows, eval_batch;
	int fuse; /* mixed precision: q,k,v share bits, gate,up share bits */
	long eval_windows;
	/* linears */
	int nlin;
	struct qa_lin *lin;
	float *block;     /* every w0 and h: one allocation */
	int64_t nweights; /* weights in the linears */
	size_t nparams;   /* all fp32 parameters of the model */
	double calib_time, load_time;
	long calib_rows;
	/* the calibration data, kept for the loss probes of the planner */
	float *cx;        /* MLP [calib][dim] images */
	int *cy;          /* MLP [calib] labels */
	uint8_t *cin;     /* LM [calib_windows][window] input bytes */
	int32_t *ctgt;    /* LM [calib_windows][window] next bytes */
	int capture;      /* 1 while a calibration pass accumulates H */
	int plan_err;     /* planner error: QA_ERR_FISHER, QA_ERR_OUTPUT, QA_ERR_PROBE */
	double *fisher_block;
	char methods[256]; /* "" or a comma list of method or method:bits:group to run */
	int trained;
};

/* One configuration of the sweep. */
struct qa_conf {
	char method[24], bits[16], group[16];
	struct quant_method m;
	int mixed; /* 1: per-layer plan over qa_cand_bits of m.kind at group m.q.group */
};

/* ---------------------------------------------------------------- cases, params */

static cJSON *qa_cases(const struct ocb_ctx *ctx)
{
	cJSON *a = cJSON_CreateArray(), *o;
	if (!a)
		return NULL;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "model", "mlp");
	cJSON_AddNumberToObject(o, "calib", ctx->quick ? 256 : 1024);
	cJSON_AddItemToArray(a, o);
	if (!ctx->quick) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "model", "lm");
		cJSON_AddNumberToObject(o, "calib_windows", 32);
		cJSON_AddNumberToObject(o, "window", 128);
		cJSON_AddNumberToObject(o, "stride", 128);
		cJSON_AddNumberToObject(o, "eval_windows", 256);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* ---------------------------------------------------------------- models */

/* Trains a model through the trainer interface (no callbacks) and saves it at path. */
static int qa_train(const struct ocb_trainer *t, const void *spec,
		    const struct ocb_train_cfg *cfg, const char *path)
{
	struct ocb_train_result res;
	void *tr = NULL;
	int rc = t->create(spec, cfg, &tr);
	if (rc == OCB_OK)
		rc = ocb_trainer_run(t, tr, cfg, NULL, &res);
	if (rc == OCB_OK)
		rc = t->save(tr, path);
	t->free(tr);
	return rc;
}

/* Trains the fp32 MLP baseline when its checkpoint is missing (the default recipe, the
 * run's seed, evaluation after the last epoch only; --quick: 2 epochs on 10,000 images). */
static int qa_train_mlp(struct qa_state *st, const char *path, const struct ocb_ctx *ctx)
{
	struct ocb_mlp_spec sp = {.train = &st->train, .test = &st->test};
	struct ocb_train_cfg tc;
	ocb_mlp_default_cfg(&sp.model);
	ocb_mlp_train_defaults(&tc);
	tc.seed = st->seed;
	tc.threads = ctx->threads;
	tc.eval_every = 0;
	if (st->quick) {
		tc.epochs = 2;
		sp.max_train = 10000;
	}
	ocb_info("quant_accuracy: %s missing: training the fp32 MLP (%d epochs)", path,
		 tc.epochs);
	return qa_train(&ocb_trainer_mlp, &sp, &tc, path);
}

/* Trains the fp32 LM baseline when its checkpoint is missing: the default recipe
 * (lm_train_defaults: 700 steps of 16 x 128) and the run's seed, no validation passes
 * (the sweep evaluates). */
static int qa_train_lm(struct qa_state *st, const char *path, const struct ocb_ctx *ctx)
{
	struct lm_config mc;
	struct lm_train_spec sp;
	struct ocb_train_cfg tc;
	lm_config_default(&mc);
	lm_train_spec_defaults(&sp, &mc);
	sp.train = st->text.train;
	sp.ntrain = st->text.ntrain;
	lm_train_defaults(&tc);
	tc.seed = st->seed;
	tc.threads = ctx->threads;
	tc.eval_every = 0;
	ocb_info("quant_accuracy: %s missing: training the fp32 LM (%ld steps)", path, tc.steps);
	return qa_train(&lm_trainer, &sp, &tc, path);
}

static int file_exists(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0;
}

/* Lays out one allocation for w0 and h of every linear; copies w0 from the model. */
static int qa_alloc_linears(struct qa_state *st)
{
	size_t floats = 0;
	for (int i = 0; i < st->nlin; i++) {
		const struct ocb_linear *l = st->lin[i].lin;
		floats += ocb_round_up((size_t)l->out * l->in, 16) + ocb_round_up((size_t)l->in * l->in, 16);
	}
	size_t outs = 0;
	for (int i = 0; i < st->nlin; i++)
		outs += (size_t)st->lin[i].lin->out;
	st->block = ocb_alloc(floats * sizeof(float));
	st->fisher_block = calloc(outs, sizeof(double));
	if (!st->block || !st->fisher_block)
		return OCB_ENOMEM;
	double *fp = st->fisher_block;
	for (int i = 0; i < st->nlin; i++) {
		st->lin[i].fisher = fp;
		fp += st->lin[i].lin->out;
	}
	float *p = st->block;
	st->nweights = 0;
	for (int i = 0; i < st->nlin; i++) {
		struct qa_lin *q = &st->lin[i];
		size_t nw = (size_t)q->lin->out * q->lin->in, nh = (size_t)q->lin->in * q->lin->in;
		q->w0 = p;
		p += ocb_round_up(nw, 16);
		q->h = p;
		p += ocb_round_up(nh, 16);
		memcpy(q->w0, q->lin->w, nw * sizeof(float));
		st->nweights += (int64_t)nw;
	}
	return OCB_OK;
}

static int qa_setup_mlp(struct qa_state *st, const struct ocb_ctx *ctx)
{
	char path[600];
	int rc;
	if ((rc = ocb_artifact_path(ctx, OCB_ARTIFACT_MLP_FP32, path, sizeof path)))
		return rc;
	if ((rc = ocb_fmnist_load(ctx->data_dir, 1, &st->train)) ||
	    (rc = ocb_fmnist_load(ctx->data_dir, 0, &st->test)))
		return rc;
	double t0 = ocb_now_s();
	if (!file_exists(path)) {
		if ((rc = qa_train_mlp(st, path, ctx)))
			return rc;
		st->trained = 1;
	}
	if ((rc = ocb_mlp_load(path, QA_MLP_BATCH, &st->mlp)))
		return rc;
	st->have_mlp = 1;
	st->load_time = ocb_now_s() - t0;
	if (st->mlp.cfg.dims[0] != st->train.dim)
		return ocb_seterr(OCB_EFORMAT, "%s: MLP input %d, images have %d pixels", path,
				  st->mlp.cfg.dims[0], st->train.dim);
	st->nlin = st->mlp.cfg.nlayers;
	st->lin = calloc((size_t)st->nlin, sizeof *st->lin);
	if (!st->lin)
		return OCB_ENOMEM;
	for (int i = 0; i < st->nlin; i++) {
		snprintf(st->lin[i].name, sizeof st->lin[i].name, "fc%d", i);
		st->lin[i].lin = &st->mlp.layer[i];
		st->lin[i].fuse = -1;
	}
	st->nparams = st->mlp.nparams;
	if ((rc = qa_alloc_linears(st)))
		return rc;

	/* Calibration data: `calib` random training images (seeded). */
	int dim = st->train.dim, n = st->calib;
	st->cx = malloc((size_t)n * dim * sizeof *st->cx);
	st->cy = malloc((size_t)n * sizeof *st->cy);
	int *idx = malloc((size_t)n * sizeof *idx);
	if (!st->cx || !st->cy || !idx) {
		free(idx);
		return OCB_ENOMEM;
	}
	struct ocb_rng r;
	ocb_rng_seed(&r, st->seed ^ 0x7175616e74ULL);
	for (int i = 0; i < n; i++)
		idx[i] = (int)ocb_rng_below(&r, (uint64_t)st->train.n);
	ocb_idx_gather(&st->train, idx, 0, n, st->cx, st->cy);
	free(idx);
	st->calib_rows = n;
	return OCB_OK;
}

static void qa_lm_hook(void *ctx, int index, const float *x, int n, int in)
{
	struct qa_state *st = ctx;
	if (index >= 0 && index < st->nlin)
		quant_hessian_add(st->lin[index].h, in, x, n);
}

static int qa_setup_lm(struct qa_state *st, const struct ocb_ctx *ctx)
{
	char path[600];
	int rc;
	if ((rc = ocb_artifact_path(ctx, OCB_ARTIFACT_LM_FP32, path, sizeof path)))
		return rc;
	if ((rc = ocb_text_load(NULL, &st->text))) /* fortunes (data_dir is for images) */
		return rc;
	double t0 = ocb_now_s();
	if (!file_exists(path)) {
		if ((rc = qa_train_lm(st, path, ctx)))
			return rc;
		st->trained = 1;
	}
	if ((rc = lm_load(path, 1, &st->lm))) /* gradients: the planner's Fisher pass */
		return rc;
	st->load_time = ocb_now_s() - t0;
	if (st->window > st->lm->cfg.ctx)
		return ocb_seterr(OCB_EINVAL, "quant_accuracy: window %d > LM context %d",
				  st->window, st->lm->cfg.ctx);
	st->nlin = lm_nlinears(st->lm);
	st->lin = calloc((size_t)st->nlin, sizeof *st->lin);
	if (!st->lin)
		return OCB_ENOMEM;
	int nl = st->lm->cfg.n_layers;
	for (int i = 0; i < st->nlin; i++) {
		const char *name = NULL;
		st->lin[i].lin = lm_linear(st->lm, i, &name);
		snprintf(st->lin[i].name, sizeof st->lin[i].name, "%s", name ? name : "?");
		/* fused groups: q,k,v of a block share bits; gate,up too (used with fuse=1) */
		int l = i / LM_LIN_PER_LAYER, k = i % LM_LIN_PER_LAYER;
		st->lin[i].fuse = i >= nl * LM_LIN_PER_LAYER ? -1
				  : k <= 2			 ? 2 * l
				  : (k == 4 || k == 5)		 ? 2 * l + 1
								 : -1;
	}
	st->nparams = st->lm->nparams;
	if ((rc = qa_alloc_linears(st)))
		return rc;

	/* Calibration data: random training windows (seeded) with their next bytes. */
	int T = st->window, nw = st->calib_windows;
	if (st->text.ntrain < (size_t)T + 1)
		return ocb_seterr(OCB_EINVAL, "%s: training text shorter than one window",
				  st->text.source);
	st->cin = malloc((size_t)nw * T);
	st->ctgt = malloc((size_t)nw * T * sizeof *st->ctgt);
	if (!st->cin || !st->ctgt)
		return OCB_ENOMEM;
	struct ocb_rng r;
	ocb_rng_seed(&r, st->seed ^ 0x6c6d63616cULL);
	for (int w = 0; w < nw; w++) {
		size_t off = ocb_rng_below(&r, st->text.ntrain - (size_t)T);
		for (int t = 0; t < T; t++) {
			st->cin[(size_t)w * T + t] = st->text.train[off + t];
			st->ctgt[(size_t)w * T + t] = st->text.train[off + t + 1];
		}
	}
	st->calib_rows = (long)nw * T;
	return OCB_OK;
}

/* Fisher capture (LM): an fp32 linear impl whose input-gradient product also adds
 * sum_n dy[n][j]^2 to the layer's fisher[j]. Installed only during qa_fisher_pass. */
static void qa_cap_forward(const void *state, const struct ocb_linear *l, const float *x,
			   int n, float *y)
{
	(void)state;
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, l->out, l->in, 1.0f, x, l->in,
		    l->w, l->in, 0.0f, y, l->out);
}

static void qa_cap_backward(const void *state, const struct ocb_linear *l, const float *dy,
			    int n, float *dx)
{
	const struct qa_lin *q = state;
	for (int r = 0; r < n; r++)
		for (int j = 0; j < l->out; j++) {
			double g = dy[(size_t)r * l->out + j];
			q->fisher[j] += g * g;
		}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, l->in, l->out, 1.0f, dy, l->out,
		    l->w, l->in, 0.0f, dx, l->in);
}

static size_t qa_cap_bytes(const void *state, const struct ocb_linear *l)
{
	(void)state;
	return (size_t)l->out * l->in * sizeof(float);
}

static const struct ocb_linear_impl qa_capture_impl = {
	.name = "fp32_fisher_capture",
	.forward = qa_cap_forward,
	.backward_input = qa_cap_backward,
	.weight_bytes = qa_cap_bytes,
};

/* The diagonal empirical Fisher of every linear's output on the calibration data,
 * F_j = sum over rows of (dLoss/dy_j)^2 (the weighting BRECQ, Li et al. ICLR 2021, puts on
 * the output reconstruction error). LM: forward + backward through the capture impl.
 * MLP: the softmax-CE gradient propagated by hand (layer 0 computes no input gradient in
 * model_mlp, so the impl would not see its dy). Weights are fp32 (st->lin[].w0). */
static int qa_fisher_pass(struct qa_state *st)
{
	int rc = OCB_OK;
	if (st->is_lm) {
		const int B = 8, T = st->window, nw = st->calib_windows;
		for (int i = 0; i < st->nlin; i++) {
			st->lin[i].lin->impl = &qa_capture_impl;
			st->lin[i].lin->impl_state = &st->lin[i];
		}
		for (int w = 0; w < nw && rc == OCB_OK; w += B) {
			int nb = nw - w < B ? nw - w : B;
			rc = lm_forward(st->lm, st->cin + (size_t)w * T, st->ctgt + (size_t)w * T, nb, T,
					NULL, NULL);
			if (rc == OCB_OK)
				rc = lm_backward(st->lm);
		}
		for (int i = 0; i < st->nlin; i++) {
			st->lin[i].lin->impl = NULL;
			st->lin[i].lin->impl_state = NULL;
		}
		return rc;
	}
	int dim = st->train.dim, L = st->mlp.cfg.nlayers, maxd = 0;
	for (int i = 0; i <= L; i++)
		maxd = st->mlp.cfg.dims[i] > maxd ? st->mlp.cfg.dims[i] : maxd;
	float *d = malloc((size_t)QA_MLP_BATCH * maxd * sizeof *d);
	float *e = malloc((size_t)QA_MLP_BATCH * maxd * sizeof *e);
	float *probs = malloc((size_t)QA_MLP_BATCH * maxd * sizeof *probs);
	if (!d || !e || !probs) {
		rc = ocb_seterr(OCB_ENOMEM, "quant_accuracy: Fisher buffers");
		goto out;
	}
	for (int b = 0; b < st->calib; b += QA_MLP_BATCH) {
		int nb = st->calib - b < QA_MLP_BATCH ? st->calib - b : QA_MLP_BATCH;
		const float *logits = ocb_mlp_forward(&st->mlp, st->cx + (size_t)b * dim, nb);
		ocb_softmax_xent(logits, st->cy + b, nb, st->mlp.cfg.dims[L], probs, d);
		for (int i = L - 1; i >= 0; i--) { /* d [nb][out_i]: dLoss/d(output of layer i) */
			const struct ocb_linear *l = st->lin[i].lin;
			for (int r = 0; r < nb; r++)
				for (int j = 0; j < l->out; j++) {
					double g = d[(size_t)r * l->out + j];
					st->lin[i].fisher[j] += g * g;
				}
			if (i == 0)
				break;
			/* e [nb][in] = d W, then the ReLU before layer i: act[i] > 0 */
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, l->in, l->out, 1.0f,
				    d, l->out, l->w, l->in, 0.0f, e, l->in);
			for (size_t k = 0; k < (size_t)nb * l->in; k++)
				d[k] = st->mlp.act[i][k] > 0.0f ? e[k] : 0.0f;
		}
	}
out:
	free(d);
	free(e);
	free(probs);
	return rc;
}

/* One pass of the current model over the calibration data: *loss = mean cross-entropy
 * (nats; per image or per byte). With st->capture set, every linear's input is added to
 * its H (MLP: act[i] is layer i's input; LM: the model's linear-input hook). */
static int qa_calib_pass(struct qa_state *st, double *loss)
{
	int rc = OCB_OK;
	double sum = 0.0;
	long cnt = 0;
	if (st->is_lm) {
		const int B = 8, T = st->window, nw = st->calib_windows;
		st->lm->on_linear_input = st->capture ? qa_lm_hook : NULL;
		st->lm->hook_ctx = st;
		for (int w = 0; w < nw && rc == OCB_OK; w += B) {
			int nb = nw - w < B ? nw - w : B;
			double ls = 0.0;
			long ns = 0;
			rc = lm_forward(st->lm, st->cin + (size_t)w * T, st->ctgt + (size_t)w * T, nb, T,
					&ls, &ns);
			sum += ls;
			cnt += ns;
		}
		st->lm->on_linear_input = NULL;
		st->lm->hook_ctx = NULL;
	} else {
		int dim = st->train.dim, k = st->mlp.cfg.dims[st->mlp.cfg.nlayers];
		float *probs = malloc((size_t)QA_MLP_BATCH * k * sizeof *probs);
		if (!probs)
			return ocb_seterr(OCB_ENOMEM, "quant_accuracy: calibration buffers");
		for (int b = 0; b < st->calib; b += QA_MLP_BATCH) {
			int nb = st->calib - b < QA_MLP_BATCH ? st->calib - b : QA_MLP_BATCH;
			const float *x = st->cx + (size_t)b * dim;
			const float *logits = ocb_mlp_forward(&st->mlp, x, nb);
			if (st->capture)
				for (int i = 0; i < st->nlin; i++)
					quant_hessian_add(st->lin[i].h, st->lin[i].lin->in,
							  i == 0 ? x : st->mlp.act[i], nb);
			sum += nb * ocb_softmax_xent(logits, st->cy + b, nb, k, probs, NULL);
			cnt += nb;
		}
		free(probs);
	}
	*loss = cnt ? sum / (double)cnt : NAN;
	return rc;
}

static void qa_teardown(void *state)
{
	struct qa_state *st = state;
	if (!st)
		return;
	if (st->have_mlp)
		ocb_mlp_release(&st->mlp);
	ocb_idx_release(&st->train);
	ocb_idx_release(&st->test);
	lm_free(st->lm);
	ocb_text_release(&st->text);
	free(st->lin);
	ocb_free(st->block);
	free(st->fisher_block);
	free(st->cx);
	free(st->cy);
	free(st->cin);
	free(st->ctgt);
	free(st);
}

static int qa_setup(const cJSON *params, const struct ocb_ctx *ctx, void **state)
{
	int rc;
	struct qa_state *st = calloc(1, sizeof *st);
	if (!st)
		return ocb_seterr(OCB_ENOMEM, "quant_accuracy: state");
	const char *model = ocb_json_str(params, "model", "mlp");
	st->quick = ctx->quick;
	st->seed = ctx->seed;
	snprintf(st->out_dir, sizeof st->out_dir, "%s", ctx->out_dir ? ctx->out_dir : ".");
	st->calib = (int)ocb_json_num(params, "calib", 1024);
	st->calib_windows = (int)ocb_json_num(params, "calib_windows", 32);
	st->window = (int)ocb_json_num(params, "window", 128);
	st->stride = (int)ocb_json_num(params, "stride", 128);
	st->eval_windows = (long)ocb_json_num(params, "eval_windows", 256);
	st->eval_batch = 8;
	st->fuse = (int)ocb_json_num(params, "fuse", 0) != 0;
	snprintf(st->methods, sizeof st->methods, "%s", ocb_json_str(params, "methods", ""));
	const char *pe = ocb_json_str(params, "plan_err", "fisher");
	if (!strcmp(pe, "fisher"))
		st->plan_err = QA_ERR_FISHER;
	else if (!strcmp(pe, "output"))
		st->plan_err = QA_ERR_OUTPUT;
	else if (!strcmp(pe, "probe"))
		st->plan_err = QA_ERR_PROBE;
	else {
		rc = ocb_seterr(OCB_EINVAL, "quant_accuracy: plan_err \"%s\" (fisher, output or "
				"probe)", pe);
		goto out;
	}
	if (strcmp(model, "mlp") == 0) {
		if (st->calib < 1) {
			rc = ocb_seterr(OCB_EINVAL, "quant_accuracy: calib %d < 1", st->calib);
			goto out;
		}
		rc = qa_setup_mlp(st, ctx);
	} else if (strcmp(model, "lm") == 0) {
		st->is_lm = 1;
		if (st->calib_windows < 1 || st->window < 2 || st->stride < 1 ||
		    st->stride > st->window) {
			rc = ocb_seterr(OCB_EINVAL, "quant_accuracy: bad LM calibration/eval "
					"protocol (calib_windows %d, window %d, stride %d)",
					st->calib_windows, st->window, st->stride);
			goto out;
		}
		rc = qa_setup_lm(st, ctx);
	} else {
		rc = ocb_seterr(OCB_EINVAL, "quant_accuracy: unknown model \"%s\" (mlp or lm)",
				model);
	}
	if (rc == OCB_OK) {
		double t0 = ocb_now_s(), loss;
		st->capture = 1;
		rc = qa_calib_pass(st, &loss);
		st->capture = 0;
		if (rc == OCB_OK)
			rc = qa_fisher_pass(st);
		st->calib_time = ocb_now_s() - t0;
	}
	if (rc == OCB_OK)
		for (int i = 0; i < st->nlin; i++) {
			const struct ocb_linear *l = st->lin[i].lin;
			float *zero = ocb_alloc((size_t)l->out * l->in * sizeof(float));
			if (!zero) {
				rc = OCB_ENOMEM;
				break;
			}
			st->lin[i].out_norm = quant_output_err(st->lin[i].w0, zero, l->out, l->in,
							       st->lin[i].h);
			ocb_free(zero);
		}
out:
	if (rc) {
		qa_teardown(st);
		return rc;
	}
	*state = st;
	return OCB_OK;
}

/* ---------------------------------------------------------------- evaluation */

/* MLP: accuracy on the test set. LM: validation loss and perplexity (sliding windows). */
static int qa_eval(struct qa_state *st, double *metric, double *loss)
{
	if (st->is_lm) {
		long ns = 0;
		int rc = lm_eval(st->lm, st->text.val, st->text.nval, st->window, st->stride,
				 st->eval_batch, st->eval_windows, loss, metric, &ns);
		return rc;
	}
	int dim = st->test.dim, correct = 0;
	float *x = malloc((size_t)QA_MLP_BATCH * dim * sizeof *x);
	int *y = malloc(QA_MLP_BATCH * sizeof *y), *pred = malloc(QA_MLP_BATCH * sizeof *pred);
	if (!x || !y || !pred) {
		free(x);
		free(y);
		free(pred);
		return ocb_seterr(OCB_ENOMEM, "quant_accuracy: eval buffers");
	}
	for (int b = 0; b < st->test.n; b += QA_MLP_BATCH) {
		int nb = st->test.n - b < QA_MLP_BATCH ? st->test.n - b : QA_MLP_BATCH;
		ocb_idx_gather(&st->test, NULL, b, nb, x, y);
		ocb_mlp_predict(&st->mlp, x, nb, pred);
		for (int i = 0; i < nb; i++)
			correct += pred[i] == y[i];
	}
	free(x);
	free(y);
	free(pred);
	*metric = (double)correct / st->test.n;
	*loss = NAN;
	return OCB_OK;
}

static void qa_restore(struct qa_state *st)
{
	for (int i = 0; i < st->nlin; i++)
		memcpy(st->lin[i].lin->w, st->lin[i].w0,
		       (size_t)st->lin[i].lin->out * st->lin[i].lin->in * sizeof(float));
}

/* ---------------------------------------------------------------- configurations */

/* 1 if `list` (comma separated; "" = everything) names method or method:bits:group. */
static int qa_selected(const char *list, const char *method, const char *bits,
		       const char *group)
{
	char full[64], tok[64];
	if (!list[0] || !strcmp(method, "fp32")) /* fp32 always runs: the baseline */
		return 1;
	snprintf(full, sizeof full, "%s:%s:%s", method, bits, group);
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		snprintf(tok, sizeof tok, "%.*s", (int)(n < sizeof tok ? n : sizeof tok - 1), p);
		if (!strcmp(tok, method) || !strcmp(tok, full))
			return 1;
		p += n + (p[n] == ',');
	}
	return 0;
}

static void add_conf(const char *filter, struct qa_conf *c, int *n, const char *method, const char *bits,
		     const char *group, struct quant_method m, int mixed)
{
	struct qa_conf *q = &c[*n];
	snprintf(q->method, sizeof q->method, "%s", method);
	snprintf(q->bits, sizeof q->bits, "%s", bits);
	snprintf(q->group, sizeof q->group, "%s", group);
	q->m = m;
	q->mixed = mixed;
	if (qa_selected(filter, method, bits, group))
		(*n)++;
}

static const char *format_bits(enum qformat_type t)
{
	switch (t) {
	case QF_Q8_0:
		return "8";
	case QF_Q4_0:
	case QF_Q4_1:
		return "4";
	case QF_Q3_G:
		return "3";
	case QF_Q2_G:
		return "2";
	default:
		return "1.58";
	}
}

/* The sweep for one model; returns the count (c has room for 64). */
static int qa_confs(const struct qa_state *st, struct qa_conf *c)
{
	int n = 0;
	char b[16], g[16];
	const int groups[3] = {32, 128, 0};
	add_conf(st->methods, c, &n, "fp32", "32", "-", (struct quant_method){.kind = QA_FP32}, 0);
	if (st->quick) {
		add_conf(st->methods, c, &n, "rtn", "3", "128",
			 (struct quant_method){.kind = QA_RTN, .q = {3, 128, 0}}, 0);
		add_conf(st->methods, c, &n, "gptq", "3", "128",
			 (struct quant_method){.kind = QA_GPTQ, .q = {3, 128, 0}, .act_order = 1}, 0);
		add_conf(st->methods, c, &n, "q8_0", "8", "32",
			 (struct quant_method){.kind = QA_FORMAT, .fmt = qformat_get(QF_Q8_0)}, 0);
		add_conf(st->methods, c, &n, "q8_0/fp16-aware", "8", "32",
			 (struct quant_method){.kind = QA_FORMAT, .fmt = qformat_get(QF_Q8_0),
					       .rounding = QF_ROUND_FP16_AWARE}, 0);
		add_conf(st->methods, c, &n, "mixed_gptq", "3", "128",
			 (struct quant_method){.kind = QA_GPTQ, .q = {3, 128, 0}, .act_order = 1}, 1);
		return n;
	}
	const int rtn_bits[4] = {8, 4, 3, 2};
	for (int bi = 0; bi < 4; bi++)
		for (int gi = 0; gi < 3; gi++) {
			if (rtn_bits[bi] == 8 && groups[gi] != 128)
				continue; /* 8-bit is lossless at any group: one column suffices */
			snprintf(b, sizeof b, "%d", rtn_bits[bi]);
			snprintf(g, sizeof g, groups[gi] ? "%d" : "pc", groups[gi]);
			add_conf(st->methods, c, &n, "rtn", b, g,
				 (struct quant_method){.kind = QA_RTN,
						       .q = {rtn_bits[bi], groups[gi], 0}}, 0);
		}
	for (int bits = 4; bits >= 2; bits--)
		for (int gi = 0; gi < 3; gi++) {
			snprintf(b, sizeof b, "%d", bits);
			snprintf(g, sizeof g, groups[gi] ? "%d" : "pc", groups[gi]);
			add_conf(st->methods, c, &n, "gptq", b, g,
				 (struct quant_method){.kind = QA_GPTQ, .q = {bits, groups[gi], 0},
						       .act_order = 1}, 0);
		}
	for (int f = 0; f < qformat_count(); f++) {
		const struct qformat *fmt = qformat_get(f);
		snprintf(g, sizeof g, "%d", fmt->block);
		add_conf(st->methods, c, &n, fmt->name, format_bits(fmt->type), g,
			 (struct quant_method){.kind = QA_FORMAT, .fmt = fmt}, 0);
		if (qformat_has_fp16aware(fmt)) {
			char m16[24];
			snprintf(m16, sizeof m16, "%s/%s", fmt->name,
				 qformat_rounding_name(QF_ROUND_FP16_AWARE));
			add_conf(st->methods, c, &n, m16, format_bits(fmt->type), g,
				 (struct quant_method){.kind = QA_FORMAT, .fmt = fmt,
						       .rounding = QF_ROUND_FP16_AWARE}, 0);
		}
	}
	add_conf(st->methods, c, &n, "ternary", "1.58", "tensor",
		 (struct quant_method){.kind = QA_TERNARY, .per_row = 0}, 0);
	add_conf(st->methods, c, &n, "ternary", "1.58", "row",
		 (struct quant_method){.kind = QA_TERNARY, .per_row = 1}, 0);
	add_conf(st->methods, c, &n, "mixed_rtn", "3", "128",
		 (struct quant_method){.kind = QA_RTN, .q = {3, 128, 0}}, 1);
	add_conf(st->methods, c, &n, "mixed_gptq", "3", "128",
		 (struct quant_method){.kind = QA_GPTQ, .q = {3, 128, 0}, .act_order = 1}, 1);
	return n;
}

/* Quantizes every linear by c (into lin->w); *bits = total storage. */
static int qa_quantize_uniform(struct qa_state *st, const struct quant_method *m,
			       int64_t *bits)
{
	*bits = 0;
	for (int i = 0; i < st->nlin; i++) {
		struct qa_lin *q = &st->lin[i];
		int64_t b = 0;
		int rc = quant_apply(m, q->w0, q->lin->out, q->lin->in, q->h, q->lin->w, &b, NULL);
		if (rc)
			return rc;
		*bits += b;
	}
	return OCB_OK;
}

/* Mixed precision: quantize each linear at each candidate bit-width (same method and
 * group as c->m), measure the calibration output error, solve exactly under the storage
 * of uniform c->m.q.bits, install the chosen weights, save the plan JSON. */
static int qa_quantize_mixed(struct qa_state *st, const struct qa_conf *c, int fuse,
			     int64_t *bits, double *pred, double *uni_pred)
{
	int rc = OCB_OK, nl = st->nlin;
	struct mixprec_layer *layers = calloc((size_t)nl, sizeof *layers);
	struct mixprec_option *opts = calloc((size_t)nl * QA_MAXCAND, sizeof *opts);
	float **cache = calloc((size_t)nl * QA_MAXCAND, sizeof *cache);
	struct mixprec_plan plan = {0};
	int uni_k = -1;
	if (!layers || !opts || !cache) {
		rc = ocb_seterr(OCB_ENOMEM, "quant_accuracy: plan buffers");
		goto out;
	}
	for (int k = 0; k < QA_MAXCAND; k++)
		if (qa_cand_bits[k] == c->m.q.bits)
			uni_k = k;
	int64_t budget = 0;
	*uni_pred = 0;
	for (int i = 0; i < nl; i++) {
		struct qa_lin *q = &st->lin[i];
		int out = q->lin->out, in = q->lin->in;
		snprintf(layers[i].name, sizeof layers[i].name, "%s", q->name);
		layers[i].n = (int64_t)out * in;
		layers[i].fuse = fuse ? q->fuse : -1;
		layers[i].nopt = QA_MAXCAND;
		layers[i].opt = opts + (size_t)i * QA_MAXCAND;
		for (int k = 0; k < QA_MAXCAND; k++) {
			struct quant_method m = c->m;
			struct mixprec_option *o = &opts[(size_t)i * QA_MAXCAND + k];
			float **qw = &cache[(size_t)i * QA_MAXCAND + k];
			m.q.bits = qa_cand_bits[k];
			*qw = ocb_alloc((size_t)out * in * sizeof(float));
			if (!*qw) {
				rc = OCB_ENOMEM;
				goto out;
			}
			if ((rc = quant_apply(&m, q->w0, out, in, q->h, *qw, &o->cost_bits, NULL)))
				goto out;
			snprintf(o->name, sizeof o->name, "%s_b%d_g%d", quant_method_name(&m),
				 m.q.bits, quant_group_len(&m.q, in));
			o->bits = m.q.bits;
			o->group = quant_group_len(&m.q, in);
			if (st->plan_err == QA_ERR_FISHER) {
				double *rows = malloc((size_t)out * sizeof *rows);
				if (!rows) {
					rc = OCB_ENOMEM;
					goto out;
				}
				quant_output_err_rows(q->w0, *qw, out, in, q->h, rows);
				o->err = 0.0;
				for (int r = 0; r < out; r++)
					o->err += q->fisher[r] * rows[r];
				free(rows);
			} else {
				o->err = quant_output_err(q->w0, *qw, out, in, q->h);
			}
		}
	}
	/* Sensitivity scaling: the output error says how much a layer's output moves, not
	 * what that costs the model. One probe per layer — only that layer at the lowest
	 * candidate, the rest fp32 — measures the calibration-loss increase d_l; every
	 * candidate's error of the layer is then scaled by d_l / e_l(lowest), so e_l(c)
	 * estimates the loss increase of c while keeping the output error's shape across bits.
	 * A layer whose probe does not increase the loss gets error 0 (cheapest candidate). */
	if (st->plan_err == QA_ERR_PROBE) {
		double l0, l;
		qa_restore(st);
		if ((rc = qa_calib_pass(st, &l0)))
			goto out;
		for (int i = 0; i < nl && rc == OCB_OK; i++) {
			struct ocb_linear *lin = st->lin[i].lin;
			size_t nw = (size_t)lin->out * lin->in;
			memcpy(lin->w, cache[(size_t)i * QA_MAXCAND], nw * sizeof(float));
			rc = qa_calib_pass(st, &l);
			memcpy(lin->w, st->lin[i].w0, nw * sizeof(float));
			double e0 = opts[(size_t)i * QA_MAXCAND].err;
			double sens = (e0 > 0 && l > l0) ? (l - l0) / e0 : 0.0;
			for (int k = 0; k < QA_MAXCAND; k++)
				opts[(size_t)i * QA_MAXCAND + k].err *= sens;
		}
		if (rc)
			goto out;
	}
	for (int i = 0; i < nl; i++) {
		budget += opts[(size_t)i * QA_MAXCAND + uni_k].cost_bits;
		*uni_pred += opts[(size_t)i * QA_MAXCAND + uni_k].err;
	}
	if ((rc = mixprec_solve(layers, nl, budget, &plan)))
		goto out;
	*bits = plan.bits;
	*pred = plan.err;
	for (int i = 0; i < nl; i++)
		memcpy(st->lin[i].lin->w, cache[(size_t)i * QA_MAXCAND + plan.choice[i]],
		       (size_t)layers[i].n * sizeof(float));
	char path[700];
	snprintf(path, sizeof path, "%s/quant_plan_%s_%s.json", st->out_dir,
		 st->is_lm ? "lm" : "mlp", c->method);
	if ((rc = mixprec_plan_save(path, layers, nl, &plan)))
		goto out;
out:
	if (cache)
		for (int i = 0; i < nl * QA_MAXCAND; i++)
			ocb_free(cache[i]);
	free(cache);
	free(opts);
	free(layers);
	mixprec_plan_release(&plan);
	return rc;
}

/* Finds the main metric of a configuration already run (NAN if absent). */
static double qa_lookup(const struct qa_conf *c, const double *metric, int n,
			const char *method, const char *bits, const char *group)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(c[i].method, method) && !strcmp(c[i].bits, bits) &&
		    !strcmp(c[i].group, group))
			return metric[i];
	return NAN;
}

static int qa_workload(void *state, const struct ocb_ctx *ctx)
{
	struct qa_state *st = state;
	const struct ocb_metric_sink *s = &ctx->metrics;
	const char *model = st->is_lm ? "lm" : "mlp";
	struct qa_conf conf[64];
	double metric[64];
	int nc = qa_confs(st, conf), rc = OCB_OK;
	double base = NAN;
	char wl[128];

	for (int ci = 0; ci < nc && rc == OCB_OK; ci++) {
		struct qa_conf *c = &conf[ci];
		int64_t bits = 0;
		double pred = NAN, uni_pred = NAN, t0 = ocb_now_s();
		if (c->mixed)
			rc = qa_quantize_mixed(st, c, st->fuse, &bits, &pred, &uni_pred);
		else
			rc = qa_quantize_uniform(st, &c->m, &bits);
		double tq = ocb_now_s() - t0;
		if (rc)
			break;
		double werr = 0, wnorm = 0, oerr = 0, onorm = 0, m = NAN, loss = NAN;
		for (int i = 0; i < st->nlin; i++) {
			struct qa_lin *q = &st->lin[i];
			size_t nw = (size_t)q->lin->out * q->lin->in;
			for (size_t j = 0; j < nw; j++) {
				double d = (double)q->w0[j] - q->lin->w[j];
				werr += d * d;
				wnorm += (double)q->w0[j] * q->w0[j];
			}
			if (c->m.kind != QA_FP32)
				oerr += quant_output_err(q->w0, q->lin->w, q->lin->out, q->lin->in, q->h);
			onorm += q->out_norm;
		}
		double te = ocb_now_s();
		if ((rc = qa_eval(st, &m, &loss)))
			break;
		te = ocb_now_s() - te;
		metric[ci] = m;
		if (ci == 0)
			base = m;
		double bpw = (double)bits / (double)st->nweights;
		double model_bytes = (double)bits / 8.0 + 4.0 * (double)(st->nparams - (size_t)st->nweights);
		snprintf(wl, sizeof wl, "quant_acc:%s:%s:%s:%s", model, c->method, c->bits, c->group);
		if (st->is_lm) {
			ocb_metric(s, wl, -1, "val_ppl", m, "ppl");
			ocb_metric(s, wl, -1, "val_loss", loss, "nats");
		} else {
			ocb_metric(s, wl, -1, "test_accuracy", m, "ratio");
			ocb_metric(s, wl, -1, "acc_drop_points", 100.0 * (base - m), "points");
		}
		ocb_metric(s, wl, -1, "rel_err_vs_fp32", (m - base) / base, "ratio");
		ocb_metric(s, wl, -1, "effective_bpw", bpw, "bits");
		ocb_metric(s, wl, -1, "model_bytes", model_bytes, "bytes");
		ocb_metric(s, wl, -1, "quant_time", tq, "s");
		ocb_metric(s, wl, -1, "eval_time", te, "s");
		ocb_metric(s, wl, -1, "weight_rel_err", wnorm > 0 ? werr / wnorm : 0, "ratio");
		ocb_metric(s, wl, -1, "output_rel_err", onorm > 0 ? oerr / onorm : 0, "ratio");
		if (c->mixed) {
			ocb_metric(s, wl, -1, "predicted_error", pred, "sq");
			ocb_metric(s, wl, -1, "uniform_predicted_error", uni_pred, "sq");
		}
		if (ci == 0) {
			ocb_metric(s, wl, -1, "calib_rows", (double)st->calib_rows, "rows");
			ocb_metric(s, wl, -1, "calib_time", st->calib_time, "s");
			ocb_metric(s, wl, -1, "load_time", st->load_time, "s");
			ocb_metric(s, wl, -1, "trained", st->trained, "bool");
			ocb_metric(s, wl, -1, "nweights", (double)st->nweights, "weights");
			if (st->is_lm) {
				ocb_metric(s, wl, -1, "eval_window", st->window, "tokens");
				ocb_metric(s, wl, -1, "eval_stride", st->stride, "tokens");
				ocb_metric(s, wl, -1, "eval_windows", (double)st->eval_windows, "windows");
			}
		}
		ocb_info("quant_acc %-4s %-10s b%-4s g%-6s %s %.4f  bpw %.3f  quant %.2fs", model,
			 c->method, c->bits, c->group, st->is_lm ? "ppl" : "acc", m, bpw, tq);
	}
	qa_restore(st);
	if (rc)
		return rc;

	/* The acceptance comparisons, positive = the claim holds. */
	double sign = st->is_lm ? -1.0 : 100.0; /* ppl: lower is better; acc in points */
	const char *gs[3] = {"32", "128", "pc"}, *bs[2] = {"3", "2"};
	char key[96];
	for (int b = 0; b < 2; b++)
		for (int g = 0; g < 3; g++) {
			double r = qa_lookup(conf, metric, nc, "rtn", bs[b], gs[g]);
			double q = qa_lookup(conf, metric, nc, "gptq", bs[b], gs[g]);
			if (isnan(r) || isnan(q))
				continue;
			snprintf(key, sizeof key, "%s_gptq_gain_b%s_g%s", model, bs[b], gs[g]);
			ocb_metric(s, "quant_acc_check", -1, key, sign * (q - r),
				   st->is_lm ? "ppl" : "points");
		}
	if (!st->is_lm) {
		double q8 = qa_lookup(conf, metric, nc, "q8_0", "8", "32");
		if (!isnan(q8))
			ocb_metric(s, "quant_acc_check", -1, "mlp_q8_0_margin_points",
				   0.2 - 100.0 * (base - q8), "points");
	}
	const char *mm[2] = {"rtn", "gptq"};
	for (int k = 0; k < 2; k++) {
		char mixed[16];
		snprintf(mixed, sizeof mixed, "mixed_%s", mm[k]);
		double u = qa_lookup(conf, metric, nc, mm[k], "3", "128");
		double x = qa_lookup(conf, metric, nc, mixed, "3", "128");
		if (isnan(u) || isnan(x))
			continue;
		snprintf(key, sizeof key, "%s_mixed_gain_%s", model, mm[k]);
		ocb_metric(s, "quant_acc_check", -1, key, sign * (x - u),
			   st->is_lm ? "ppl" : "points");
	}
	return OCB_OK;
}

const struct ocb_bench ocb_bench_quant_accuracy = {
	.name = "quant_accuracy",
	.suite = "quant",
	.doc = "PTQ of the fp32 MLP and LM: RTN/GPTQ/block formats/ternary/mixed precision -> "
	       "accuracy, perplexity, bpw, bytes",
	.kind = OCB_WORKLOAD,
	.cases = qa_cases,
	.setup = qa_setup,
	.workload = qa_workload,
	.teardown = qa_teardown,
	.consumes = (const char *const[]){OCB_ARTIFACT_MLP_FP32, OCB_ARTIFACT_LM_FP32, NULL},
};

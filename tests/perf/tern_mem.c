/* tern_mem: where the ternary suite's training bytes go, per method: the trainer's own
 * accounting by part (weights, gradients, optimizer state, activations) next to the
 * measured footprint (workloads/train_memory.h: peak RSS of a forked child that trains
 * `steps` steps, minus an empty child), at the recipe's batch and at batch 1, and the
 * state S = (B M(1) - M(B)) / (B - 1) fitted from the two (collect/ternary_train.c).
 * Bytes per parameter throughout. Memory does not depend on load; one run suffices.
 *
 * usage: tern_mem [mlp|lm|both (both)] [steps (3)] [LM d_model (the recipe's 64; the
 *        recipe widened by qt_lm_widen, as bench ternary_lm_width)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/ocb_error.h"
#include "../../workloads/data_idx.h"
#include "../../workloads/data_text.h"
#include "../../workloads/qt_recipe.h"
#include "../../workloads/train_memory.h"
#include "../../workloads/trainer_ternary.h"

static const struct qt_cfg methods[] = {
	{QT_FP32, 2, DQT_M_F32}, {QT_STE, 2, DQT_M_F32},  {QT_DQT, 8, DQT_M_F32},
	{QT_DQT, 2, DQT_M_F32},  {QT_DQT, 8, DQT_M_BF16}, {QT_DQT, 8, DQT_M_FP8}};
enum { NM = sizeof methods / sizeof methods[0] };

static void measure(const char *what, const struct ocb_trainer *t, void *const spec[NM],
		    const struct ocb_train_cfg *c, long steps)
{
	double ste_tot = 0, ste_state = 0;
	printf("%s, batch %d, %ld steps (B/param; state = w + g + opt):\n", what, c->batch, steps);
	printf("  %-16s %7s %7s %7s %7s | %8s %8s | %8s %8s | %6s %6s\n", "method", "w", "g",
	       "opt", "act", "tot.comp", "tot.meas", "st.comp", "st.meas", "tot/STE", "st/STE");
	for (int i = 0; i < NM; i++) {
		struct ocb_train_mem mb, m1;
		struct ocb_train_cfg c1 = *c;
		c1.batch = 1;
		if (ocb_train_measure_memory(t, spec[i], c, steps, &mb) ||
		    ocb_train_measure_memory(t, spec[i], &c1, steps, &m1)) {
			fprintf(stderr, "tern_mem: %s\n", ocb_lasterr());
			exit(3);
		}
		double np = (double)mb.nparams, b = c->batch;
		double st_meas = (b * (double)m1.measured - (double)mb.measured) / (b - 1.0) / np;
		double st_comp = (double)(mb.weights + mb.grads + mb.optimizer) / np;
		double st_cfit = (b * (double)m1.computed - (double)mb.computed) / (b - 1.0) / np;
		double tot = (double)mb.measured / np;
		char label[32], lab2[48];
		qt_cfg_label(&methods[i], label, sizeof label);
		snprintf(lab2, sizeof lab2, "%s/%s", label, dqt_mfmt_name(methods[i].moments));
		if (i == 1)
			ste_tot = tot, ste_state = st_meas;
		printf("  %-16s %7.2f %7.2f %7.2f %7.2f | %8.2f %8.2f | %8.2f %8.2f | %6.3f %6.3f%s\n",
		       lab2, mb.weights / np, mb.grads / np, mb.optimizer / np,
		       mb.activations / np, (double)mb.computed / np, tot, st_comp, st_meas,
		       ste_tot > 0 ? tot / ste_tot : 0.0, ste_state > 0 ? st_meas / ste_state : 0.0,
		       mb.hwm_reset ? "" : " (no HWM reset)");
		if (getenv("OCB_MEMDEBUG"))
			printf("    batch 1: computed %.2f measured %.2f; state from the computed fit %.2f\n",
			       m1.computed / np, m1.measured / np, st_cfit);
	}
	
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "both";
	long steps = argc > 2 ? atol(argv[2]) : 3;
	int width = argc > 3 ? atoi(argv[3]) : 0;
	int max_train;
	struct ocb_idx_set tr, te;
	struct ocb_text text;
	struct qmlp_spec ms[NM];
	struct qlm_spec ls[NM];
	struct ocb_train_cfg mc, lc;
	struct lm_config lmc;
	void *mp[NM], *lp[NM];
	int mlp = strcmp(which, "lm") != 0, lm = strcmp(which, "mlp") != 0;
	if ((mlp && (ocb_fmnist_load(NULL, 1, &tr) || ocb_fmnist_load(NULL, 0, &te))) ||
	    (lm && ocb_text_load(NULL, &text))) {
		fprintf(stderr, "tern_mem: %s\n", ocb_lasterr());
		return 2;
	}
	qt_mlp_recipe(0, &mc, &max_train);
	mc.threads = 1;
	for (int i = 0; i < NM; i++) {
		memset(&ms[i], 0, sizeof ms[i]);
		memset(&ls[i], 0, sizeof ls[i]);
		ocb_mlp_default_cfg(&ms[i].mlp.model);
		if (mlp)
			ms[i].mlp.train = &tr, ms[i].mlp.test = &te;
		ms[i].q = methods[i];
		mp[i] = &ms[i];
		qt_lm_recipe(0, &lmc, &ls[i].lm, &lc);
		if (width > 0)
			qt_lm_widen(&ls[i].lm.model, width);
		if (lm) {
			ls[i].lm.train = text.train, ls[i].lm.ntrain = text.ntrain;
			ls[i].lm.val = text.val, ls[i].lm.nval = text.nval;
		}
		ls[i].q = methods[i];
		lp[i] = &ls[i];
	}
	lc.threads = 1;
	if (mlp)
		measure("MLP 784-512-256-10", &ocb_trainer_qmlp, mp, &mc, steps);
	if (lm) {
		char what[64];
		snprintf(what, sizeof what, "byte LM (d %d, 2 layers, ctx 64)", ls[0].lm.model.d_model);
		measure(what, &ocb_trainer_qlm, lp, &lc, steps);
	}
	if (mlp)
		ocb_idx_release(&tr), ocb_idx_release(&te);
	if (lm)
		ocb_text_release(&text);
	return 0;
}

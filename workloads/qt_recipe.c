/* qt_recipe: ternary suite recipes and grid (see qt_recipe.h). */
#include "qt_recipe.h"

#include "trainer_mlp.h"

void qt_mlp_recipe(int quick, struct ocb_train_cfg *cfg, int *max_train)
{
	ocb_mlp_train_defaults(cfg);
	cfg->epochs = quick ? 1 : 2;
	cfg->warmup_epochs = 0.2f;
	cfg->eval_every = 1;
	*max_train = quick ? 5000 : 0;
}

void qt_lm_recipe(int quick, struct lm_config *mc, struct lm_train_spec *sp,
		  struct ocb_train_cfg *cfg)
{
	lm_config_default(mc);
	mc->d_model = 64;
	mc->n_layers = 2;
	mc->n_heads = 2;
	mc->ctx = 64;
	mc->ffn = lm_ffn_width(64);
	lm_train_spec_defaults(sp, mc);
	sp->eval_windows = quick ? 8 : 32;
	sp->final_eval_windows = quick ? 16 : 128;
	lm_train_defaults(cfg);
	cfg->steps = quick ? 40 : 400;
	cfg->warmup_steps = cfg->steps / QT_LM_WARMUP_DIV;
	cfg->lr = 3e-3f;
	cfg->log_every = 10;
	cfg->eval_every = quick ? 0 : 100;
}

void qt_lm_widen(struct lm_config *mc, int d)
{
	mc->d_model = d;
	mc->n_heads = d / 64 > 2 ? d / 64 : 2;
	mc->ffn = lm_ffn_width(d);
}

static const struct qt_cfg grid_full[] = {
	{QT_FP32, 2, DQT_M_F32}, {QT_STE, 2, DQT_M_F32},  {QT_DQT, 8, DQT_M_F32},
	{QT_DQT, 4, DQT_M_F32},  {QT_DQT, 3, DQT_M_F32},  {QT_DQT, 2, DQT_M_F32},
	{QT_DQT, 8, DQT_M_BF16}, {QT_DQT, 8, DQT_M_FP8},  {QT_DQT, 2, DQT_M_BF16},
	{QT_DQT, 2, DQT_M_FP8},
};

static const struct qt_cfg grid_quick[] = {
	{QT_FP32, 2, DQT_M_F32}, {QT_STE, 2, DQT_M_F32}, {QT_DQT, 8, DQT_M_F32},
	{QT_DQT, 2, DQT_M_F32},  {QT_DQT, 8, DQT_M_BF16},
};

const struct qt_cfg *qt_suite_grid(int quick, int *n)
{
	*n = quick ? (int)(sizeof grid_quick / sizeof grid_quick[0])
		   : (int)(sizeof grid_full / sizeof grid_full[0]);
	return quick ? grid_quick : grid_full;
}

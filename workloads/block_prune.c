/* block_prune: block scores, cubic schedule, keep/regrow selection (see block_prune.h). */
#include "block_prune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"

double ocb_prune_sparsity(const struct ocb_prune_cfg *c, long t)
{
	if (t < c->t0)
		return 0.0;
	if (t >= c->t1)
		return c->target;
	double f = 1.0 - (double)(t - c->t0) / (double)(c->t1 - c->t0);
	return c->target * (1.0 - f * f * f);
}

int ocb_prune_due(const struct ocb_prune_cfg *c, long t)
{
	if (t < c->t0 || t > c->t1)
		return 0;
	return t == c->t1 || (t - c->t0) % c->every == 0;
}

int ocb_prune_cfg_check(const struct ocb_prune_cfg *c)
{
	if (c->block < 1)
		return ocb_seterr(OCB_EINVAL, "prune: block %d < 1", c->block);
	if (!(c->target >= 0.0 && c->target < 1.0))
		return ocb_seterr(OCB_EINVAL, "prune: target sparsity %g outside [0, 1)", c->target);
	if (c->t0 < 0 || c->t1 < c->t0 || c->every < 1)
		return ocb_seterr(OCB_EINVAL, "prune: schedule t0 %ld, t1 %ld, every %ld (need 0 <= "
					      "t0 <= t1, every >= 1)", c->t0, c->t1, c->every);
	if (!(c->regrow >= 0.0 && c->regrow < 1.0))
		return ocb_seterr(OCB_EINVAL, "prune: regrow fraction %g outside [0, 1)", c->regrow);
	return OCB_OK;
}

cJSON *ocb_prune_cfg_to_json(const struct ocb_prune_cfg *c)
{
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return NULL;
	int ok = cJSON_AddStringToObject(j, "rule", "block_frobenius_magnitude") &&
		 cJSON_AddStringToObject(j, "schedule", "cubic") &&
		 cJSON_AddNumberToObject(j, "block", c->block) &&
		 cJSON_AddNumberToObject(j, "target", c->target) &&
		 cJSON_AddNumberToObject(j, "t0", (double)c->t0) &&
		 cJSON_AddNumberToObject(j, "t1", (double)c->t1) &&
		 cJSON_AddNumberToObject(j, "every", (double)c->every) &&
		 cJSON_AddNumberToObject(j, "regrow", c->regrow) &&
		 (c->regrow > 0 ? cJSON_AddStringToObject(j, "regrow_rule", "gradient_frobenius")
				: cJSON_AddNullToObject(j, "regrow_rule")) &&
		 cJSON_AddStringToObject(j, "scope", c->global ? "global" : "layer");
	if (!ok) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

void ocb_block_norms(const float *w, int m, int k, int B, float *norms)
{
	int kb = k / B;
	for (int bi = 0; bi < m / B; bi++)
		for (int bj = 0; bj < kb; bj++) {
			double s = 0.0; /* in order: deterministic */
			for (int r = 0; r < B; r++) {
				const float *row = w + (size_t)(bi * B + r) * k + (size_t)bj * B;
				for (int c = 0; c < B; c++)
					s += (double)row[c] * row[c];
			}
			norms[(size_t)bi * kb + bj] = (float)sqrt(s);
		}
}

static const float *sort_key;
/* descending score, ascending index on ties */
static int by_score_desc(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;
	if (sort_key[i] != sort_key[j])
		return sort_key[i] > sort_key[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/* idx[0..n) sorted by key descending (qsort with a file-scope key: callers are
 * single-threaded). */
static void order_by(const float *key, int *idx, int n)
{
	sort_key = key;
	qsort(idx, (size_t)n, sizeof *idx, by_score_desc);
	sort_key = NULL;
}

int ocb_block_keep_top(const float *score, int nb, int keep, uint8_t *mask)
{
	if (keep < 0 || keep > nb)
		return ocb_seterr(OCB_EINVAL, "prune: keep %d of %d blocks", keep, nb);
	int *idx = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *idx);
	if (!idx)
		return ocb_seterr(OCB_ENOMEM, "prune: out of memory");
	for (int i = 0; i < nb; i++)
		idx[i] = i;
	order_by(score, idx, nb);
	memset(mask, 0, (size_t)nb);
	for (int i = 0; i < keep; i++)
		mask[idx[i]] = 1;
	free(idx);
	return OCB_OK;
}

int ocb_block_prune_event(const float *wscore, const float *gscore, int nb, int keep, int nswap,
			  uint8_t *mask, int *revived)
{
	int rc, *idx = NULL, n = 0, back = 0;
	float *g = NULL;
	if (revived)
		*revived = 0;
	if ((rc = ocb_block_keep_top(wscore, nb, keep, mask)) || !gscore || nswap <= 0)
		return rc;
	uint8_t *was_dead = malloc((size_t)nb);
	idx = malloc((size_t)nb * sizeof *idx);
	g = malloc((size_t)nb * sizeof *g);
	if (!was_dead || !idx || !g) {
		rc = ocb_seterr(OCB_ENOMEM, "prune: out of memory");
		goto out;
	}
	for (int i = 0; i < nb; i++)
		was_dead[i] = !mask[i];
	/* drop the nswap weakest kept blocks: keep_top of (keep - nswap) */
	if (nswap > keep)
		nswap = keep;
	if ((rc = ocb_block_keep_top(wscore, nb, keep - nswap, mask)))
		goto out;
	/* revive the strongest-gradient blocks among those dead before this event */
	for (int i = 0; i < nb; i++)
		if (was_dead[i])
			idx[n++] = i;
	order_by(gscore, idx, n);
	for (int i = 0; i < n && back < nswap; i++, back++)
		mask[idx[i]] = 1;
	/* fewer dead blocks than nswap: give the dropped ones back, best first */
	for (int i = 0; i < nb; i++)
		g[i] = mask[i] || was_dead[i] ? -INFINITY : wscore[i];
	for (int i = 0; i < nb; i++)
		idx[i] = i;
	order_by(g, idx, nb);
	for (int i = 0, filled = back; filled < nswap && i < nb; i++, filled++)
		mask[idx[i]] = 1;
out:
	if (revived)
		*revived = back;
	free(was_dead);
	free(idx);
	free(g);
	return rc;
}

static int float_desc(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x < y) - (x > y);
}

float ocb_block_kth_score(const float *score, long n, long keep)
{
	if (keep <= 0)
		return INFINITY;
	if (keep >= n)
		return -INFINITY;
	float *s = malloc((size_t)n * sizeof *s);
	if (!s)
		return NAN;
	memcpy(s, score, (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, float_desc);
	float v = s[keep - 1];
	free(s);
	return v;
}

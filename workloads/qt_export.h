/* qt_export: a DQT-ternary MLP exported to the quant suite's ternary formats (TQ2_0,
 * TQ1_0: kernels/quant_formats.h) and evaluated through its kernels (qmatmul in
 * kernels/quant_gemv.h), to show that the trained weights ARE the deployable model.
 *
 * Each registered (ternary) layer: rows of s * code (s the fixed fp16 scale, qtrain.h)
 * zero-padded to a multiple of 256 and quantized with the format's reference quantizer,
 * which reproduces the codes exactly (d = max|row block| = s). Activations are quantized
 * by qmatmul in blocks of 256 with the same arithmetic as training (tern_gemm.h), so the
 * integers multiplied are the training-time ones; the classifier stays fp32 (sgemm), as in
 * training. */
#ifndef OCB_QT_EXPORT_H
#define OCB_QT_EXPORT_H

#include <stddef.h>

#include "../kernels/quant_formats.h"
#include "data_idx.h"
#include "model_mlp.h"
#include "qtrain.h"

struct qt_export_result {
	double accuracy, loss;  /* on the whole set */
	size_t weight_bytes;    /* bytes of the exported ternary layers (blocks) */
	long mismatched;        /* weights whose exported value != s * code (0 when exact) */
};

/* m's hidden layers must be the DQT-ternary layers of set s (in order). OCB_EINVAL
 * otherwise (method/bits), OCB_ENOMEM, the kernels' errors. */
int qt_mlp_export_eval(struct ocb_mlp *m, const struct qt_set *s, const struct qformat *f,
		       const struct ocb_idx_set *test, int threads, struct qt_export_result *r);

#endif

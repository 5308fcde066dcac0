/* fmha.h: what the files of cuDNN's fused attention share (internal to
 * targets/gpu/): the decoded backend_config, dot dimension numbers, masks,
 * the helpers that write the equivalent module's common parts, and the
 * builders hlt_gpu_build_fmha (fmha.c) dispatches to: dense forms
 * (fmha_dense.c), packed and paged ones (fmha_ragged.c), F8 ones
 * (fmha_f8.c). */
#ifndef HLORUN_TARGETS_GPU_FMHA_H
#define HLORUN_TARGETS_GPU_FMHA_H
#include "targets/gpu/gpu.h"

enum { MASK_NONE, MASK_PADDING, MASK_CAUSAL, MASK_PADDING_CAUSAL, MASK_ALIBI, MASK_COUNT };
extern const char *const fmha_mask_names[MASK_COUNT];

/* One dot's dimension numbers: lhs/rhs batch and contracting dims. */
typedef struct Dims { int64_t lb[4], rb[4], lc[4], rc[4]; int nlb, nrb, nlc, nrc; } Dims;

/* The decoded config. */
typedef struct Cfg {
  double scale;
  int mask;
  bool causal, padding;
  int64_t window;               /* sliding_window_length, 0: none */
  int64_t segs;                 /* max_seg_per_batch (packed when > 1) */
  bool paged;                   /* is_paged_attention */
  Dims d1, d2;                  /* forward */
  Dims g11, g12, g21, g22;      /* backward */
} Cfg;

/* The masks of the scores (m->dims: batch..., query, key).
 * valid: pred of the scores' shape (-1 when every position is valid);
 * qrow: pred of the row shape, the query row is within q_seqlen (-1 when
 * not padding); qvalid: that of the scores' shape. */
typedef struct Mask { int valid, qrow, qvalid; } Mask;

/* fmha.c: dimension numbers and the module's common parts. */
bool fmha_has(const int64_t *v, int n, int64_t x);
int fmha_out_dims(const GpuLeaf *a, const GpuLeaf *b, const Dims *d, int64_t *out, int *nfree_a,
                  int *nfree_b);
bool fmha_same_dims(const int64_t *a, int na, const GpuLeaf *l);
int fmha_dot(GpuMod *m, int a, int b, const int64_t *od, int orank, const Dims *d);
int fmha_row_reduce(GpuMod *m, int x, double init, const char *comp);
int fmha_row_broadcast(GpuMod *m, int x);
void fmha_prelude(GpuMod *m);
Mask fmha_build_mask_lens(GpuMod *m, const Cfg *f, int ql, const int *lens);
Mask fmha_build_mask(GpuMod *m, const Cfg *f, int ql);
int fmha_select_v(GpuMod *m, int pred, int yes, int no);
int fmha_scores(GpuCall *c, GpuMod *m, const Cfg *f, int vq, int vk, const Dims *d, int bias_op,
                const Mask *k);
int fmha_row_sum_do_o(GpuMod *m, const Dims *g22, const GpuLeaf *dO, int vdo, int vo);

/* The builders: the equivalent module's text, or NULL after hlt_gpu_fail. */
char *fmha_forward(GpuCall *c, const Cfg *f);
char *fmha_backward(GpuCall *c, const Cfg *f);
char *fmha_forward_ragged(GpuCall *c, const Cfg *f);
char *fmha_backward_ragged(GpuCall *c, const Cfg *f);
char *fmha_forward_f8(GpuCall *c, const Cfg *f);
char *fmha_backward_f8(GpuCall *c, const Cfg *f);

#endif

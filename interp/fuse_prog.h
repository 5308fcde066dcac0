/* fuse_prog.h: the tile program of a fused group (internal to fuse.c,
 * which builds it, and fuse_run.c, which runs it). */
#ifndef HLORUN_INTERP_FUSE_PROG_H
#define HLORUN_INTERP_FUSE_PROG_H
#include "interp/fuse.h"
#include "interp/kernels/elementwise.h"
#include "interp/kernels/reducer.h"
#include "interp/kernels/stream.h"

enum {
  TILE = 2048,          /* elements per tile: a dozen f32 registers stay in L1/L2 */
  MIN_CHUNK = 16384,    /* elements per parallel chunk, at least */
  STACK_SCRATCH = 65536,/* registers of small groups live on the (8 MB) stack */
  MAX_ROW = 16384,      /* row groups: longest row (elements) kept in a tile */
  IOTA_MAX = 1 << 24,   /* iotas fused: at most this long along their dimension */
  STREAM_MIN = HLK_STREAM_BYTES  /* results this large are streamed past the cache */
};

/* Where a value of a group lives: a tile of the full shape, one element per
 * row of the tile (row groups), or fixed (a scalar read whole). */
typedef enum Space { SP_FULL, SP_ROWS, SP_FIXED } Space;

/* Tile operations. */
typedef enum FopKind {
  FOP_UN,      /* dst = un(src0) */
  FOP_BIN,     /* dst = bin(src0, src1) (compare too) */
  FOP_BINS,    /* dst = bin(src0, src1) with src[scal] one element: a scalar
                  broadcast's register, or per row a row value (srow) */
  FOP_SEL,     /* dst = src0 ? src1 : src2 */
  FOP_CONV,    /* dst = convert(src0) */
  FOP_LOAD,    /* dst = narrow input decoded to f32 */
  FOP_BCAST,   /* dst = broadcast input or iota values (decoded if narrow) */
  FOP_RRED,    /* dst (row space) = fold of each row of src0, from init input */
  FOP_RBCAST   /* dst = src0 (row space) repeated along each row */
} FopKind;

/* Operand references: >= 0 a register, < 0 input -(r + 1) read in place. */
enum { REG_OUT = -1 };   /* as a destination: the group's output */

typedef struct Fop {
  FopKind kind;
  HloDtype t, ot;       /* operand and result element types, as the kernel has them */
  int32_t dst;          /* register, or REG_OUT */
  int32_t src[3];
  int32_t nsrc;
  HlkUnFn un;
  HlkBinFn bin;
  int bits;             /* the loops' width argument */
  int32_t input;        /* LOAD, BCAST: input number; RRED: the init value's */
  int64_t inner, nb;    /* BCAST: tile element at flat index i = b[(i / inner) % nb] */
  const char *data;     /* BCAST of an iota: its values (b above), in the plan's arena */
  Space sp;             /* where dst lives (and the op iterates) */
  const HlkFold *fold;  /* RRED */
  int32_t scal;         /* BINS: the operand that is one element (0 or 1) */
  bool srow;            /* BINS: that operand is a row value, one per row */
  bool narrow;          /* ot is a narrow float (f32 in registers, rounded) */
  bool subbyte;         /* ot is a sub-byte integer (wrapped after the loop) */
} Fop;

struct HliFused {
  const HloInstr *root;
  int32_t ninputs;
  int32_t *inputs;      /* slots of the input values */
  int32_t nops;
  Fop *ops;             /* per tile, in order */
  int32_t npro;
  Fop *pro;             /* once per chunk: scalar broadcasts */
  int32_t nregs;
  size_t reg_es;        /* bytes per element of a register (the widest value) */
  Space *in_sp;         /* per input: where it is read */
  int64_t row_len;      /* row groups: elements per row (0: element tiles) */
  int64_t nrows;        /* row groups: rows of the full shape */
  int32_t table_input;  /* the input whose element alone each result element is a
                           function of, when it is at most 16 bits wide and the
                           group costly enough to run through a table of all its
                           values (fuse_table.c); -1 otherwise */
  int32_t table_bits;   /* that input's width: 8 or 16 */
};


/* Run f's tile program over n output elements (n rows for row groups) into
 * out (element size oes), reading input k's data from in[k] (element size
 * ies[k]); threads from x. 0, or -1 with an error on x. */
int hli_fused_run_tiles(HliExec *x, const HliFused *f, const char *const *in, const size_t *ies,
                        char *out, size_t oes, int64_t n);

/* Is a result of this many bytes written with non-temporal stores? (At
 * least STREAM_MIN, unless HLORUN_STREAM=0.) */
bool hli_fused_streams(size_t bytes);

/* Does f run through a table (fuse_table.c) for a result of n elements of
 * oes bytes? Not when the table would not fit x's memory limit (the tiles
 * need none). */
bool hli_fused_table_pays(const HliExec *x, const HliFused *f, int64_t n, size_t oes,
                          const size_t *ies);
/* f's result into out (n elements of oes bytes) through a table of its
 * results for every value of input f->table_input: bit-identical to running
 * the tiles, since each element's result depends on that value alone. */
int hli_fused_run_table(HliExec *x, const HliFused *f, const char *const *in, const size_t *ies,
                        char *out, size_t oes, int64_t n);

/* Register representation: narrow floats as f32, everything else as is. */
static inline size_t hli_fuse_reg_size(HloDtype t) {
  return hlk_is_narrow_float(t) ? 4 : hlc_dtype_size(t);
}
#endif

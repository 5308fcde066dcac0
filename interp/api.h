/* api.h: the handles of the public API (internal to interp/ and devices/),
 * shared by the files that implement it, one job each: context.c (context,
 * diagnostics, errors), bind.c (custom-call bindings), files.c (files),
 * module.c (modules), buffers.c (buffers), inputs.c (values from files),
 * proto_io.c (snapshots' values), run.c (compiling and running on one
 * device), compare.c (golden comparison), observe.c (observers). */
#ifndef HLORUN_INTERP_API_H
#define HLORUN_INTERP_API_H
#include "hlorun.h"
#include "interp/context.h"
#include "interp/exec.h"
#include "common/pager.h"

struct HloCtx {
  int threads;              /* kernels' thread count (>= 1) */
  uint64_t max_memory;      /* bytes; 0 = unlimited */
  HlcDiags diags;           /* owned: errors and warnings since the last clear */
  char *diag_text;          /* owned: rendered diags (hlo_ctx_diagnostics) */
  HliPool *pool;            /* owned: started on first compile when threads > 1 */
  struct HlfRegistry *ffi;  /* owned: custom-call bindings, or NULL */
  bool isolate;             /* custom calls run in child processes (isolate.c) */
  double cc_timeout;        /* seconds per isolated custom call */
  char *crash_dir;          /* owned: where isolated crashes save inputs, or NULL */
};

struct HloBuffer {
  HliValue *v;              /* one reference; shapes point into arena */
  HlcArena arena;           /* owned: the buffer's shapes */
};

struct HloExecutable {
  HloCtx *ctx;              /* borrowed */
  const HloModule *m;       /* borrowed */
  HliExec x;                /* owned: plans */
  HliPlan *entry;           /* the ENTRY plan (in x) */
  HliObs *obs;              /* owned: the observer (observe.c), or NULL */
  double timeout;           /* seconds per hlo_execute, 0 = none */
  /* The owner of a run on several devices (devices/run.c), opaque here:
   * x and entry then belong to its first local device. */
  void *owner;              /* owned, freed by owner_free */
  void (*owner_free)(void *owner);
};

/* Wrap v (consumes the reference) in a new buffer with its own copy of s. */
HloStatus hli_make_buffer(HloCtx *ctx, HliValue *v, const HloShape *s, HloBuffer **out);

/* Observers (observe.c): forget the state of an earlier run; did the
 * observer stop the last run? free (NULL is fine). */
void hli_obs_reset(HliObs *o);
/* Give dst the observer of src (none if src has none). */
HloStatus hli_obs_copy(HloExecutable *dst, const HloExecutable *src);
bool hli_obs_stopped(const HliObs *o);
void hli_obs_free(HliObs *o);

/* hlo_compile for one device of a grid (dev NULL: a run on one device;
 * devices/ compiles one executable per device). */
struct HliDevice;
HloStatus hli_compile_device(HloCtx *ctx, const HloModule *m, const HloRunOptions *opts,
                             const struct HliDevice *dev, HloExecutable **out);
/* Check inputs against m's ENTRY parameters and borrow their values into args. */
HloStatus hli_entry_args(HloCtx *ctx, const HloModule *m, HloBuffer *const *inputs, int n,
                         HliValue **args);
/* Run e (on one device) on args (checked by hli_entry_args): its result
 * as a new buffer, or the status of the failure (errors on the context). */
HloStatus hli_execute_args(HloExecutable *e, HliValue *const *args, HloBuffer **result);

/* Read a value of shape want from path (.npy, literal text, .npz of its
 * leaves; member: that member of a .npz instead). what names it in messages. */
HloStatus hli_load_shaped(HloCtx *ctx, const HloShape *want, const char *path, const char *member,
                          const char *what, HloBuffer **out);
/* hlo_random_param's values for ENTRY parameter index, drawn for shape s. */
HloStatus hli_random_shaped(HloCtx *ctx, const HloModule *m, int index, const HloShape *s,
                            uint64_t seed, HloBuffer **out);

/* A module's parameter index (-1: its result) shape, or NULL. */
const HloShape *hli_param_shape(const HloModule *m, int index);

/* What a value file holds, by its first bytes: .npy, .npz (a zip), else
 * text (or a protocol buffer, which proto/ sniffs). */
typedef enum { HLI_FILE_NPY, HLI_FILE_NPZ, HLI_FILE_TEXT } HliFileFormat;
HliFileFormat hli_file_format(const char *data, size_t len);
/* Write a whole file ("-": standard output) through a temporary file beside
 * it and a rename, so readers never see half a file. */
HloStatus hli_write_file(HloCtx *ctx, const char *path, const char *data, size_t len);
/* The whole file ("-": standard input), malloc'd. */
HloStatus hli_read_file(HloCtx *ctx, const char *path, char **data, size_t *len);
/* A file's bytes as hli_read_file gives them, except that a large binary
 * file (a protocol buffer, .npy, .npz) is an image whose large payloads are
 * read on demand through its pager (files.c): a snapshot's multi-GB
 * argument is then read piece by piece into its value's buffer, never held
 * twice. Close with hli_file_done (or hli_file_close). */
typedef struct HliHole { uint64_t off, len; } HliHole;
typedef struct HliFile {
  char *data;
  size_t len;
  size_t maplen;      /* > 0: data is the image, an anonymous mapping of maplen bytes */
  int fd;             /* the image's file (-1: none) */
  HlcPager pager;     /* reads the holes (hli_file_pager) */
  HliHole *holes;     /* owned: the ranges not read yet, in file order */
  size_t nholes, capholes;
  bool short_read;    /* a read came back short: the file shrank while it was read */
  int read_errno;     /* a read failed (errno), or 0 */
} HliFile;
HloStatus hli_file_open(HloCtx *ctx, const char *path, HliFile *f);
void hli_file_close(HliFile *f);
/* Did a read of the file fail or come back short (it shrank while it was
 * read)? The bytes not read are zeros, so whatever was decoded from it is
 * not to be used. */
bool hli_file_truncated(const HliFile *f);
/* Close f; if a read of it failed or came back short, record an error
 * naming path and return HLO_IO_ERROR (the caller drops what it decoded),
 * else st. */
HloStatus hli_file_done(HloCtx *ctx, HliFile *f, const char *path, HloStatus st);
/* The pager of f's image, or NULL when f's bytes are all in memory. */
HlcPager *hli_file_pager(HliFile *f);
/* A LiteralProto file's value (or a snapshot's recorded result) as a value
 * of shape want (proto_io.c); pg: hli_file_pager of the bytes, or NULL. */
HloStatus hli_value_from_proto(HloCtx *ctx, const char *data, size_t len, HlcPager *pg,
                               const HloShape *want, const char *what, HliValue **out);

/* Argument index of partition part of an HloUnoptimizedSnapshot (only that
 * one decoded; *out NULL if the partition has fewer); *nargs: how many the
 * partition holds. */
HloStatus hli_load_partition_argument(HloCtx *ctx, const char *path, int part, int index,
                                      HloBuffer **out, int *nargs);

/* extract.c: the text of a module whose ENTRY is root's computation cut
 * down by role (indexed like the computation's instructions): HLI_SUB_KEEP
 * lines stay as written, HLI_SUB_CUT ones become parameters under their own
 * names (numbered in the computation's order; *cut, malloc'd, lists them),
 * HLI_SUB_NONE ones go; root is the ROOT. NULL with *why set. Used by
 * hlo_module_extract_around and the reducer (reduce.c). */
enum { HLI_SUB_NONE, HLI_SUB_KEEP, HLI_SUB_CUT };
/* How a sub-module is written (NULL: every cut a parameter, attributes as
 * they are): lit, indexed like role, the literal text of a cut value that
 * becomes a constant instead (NULL entries stay parameters); drop, the
 * attributes left out (HLP_DROP_* of ir/print.h); root_ops, when root is
 * a tuple, which of its operands stay (indexed like them; NULL: all): the
 * ROOT is then a tuple of those alone. */
typedef struct HliSubOpts {
  const char *const *lit;
  unsigned drop;
  const unsigned char *root_ops;
} HliSubOpts;
char *hli_submodule_text(const HloModule *m, const HloInstr *root, const unsigned char *role,
                         const HliSubOpts *so, const HloInstr ***cut, int *ncut,
                         const char **why);

/* inline.c: the text of m with every fusion outside fusion bodies replaced
 * by its fused instructions; NULL with *changed false when m has none
 * (NULL with *changed true: out of memory). For the reducer. */
char *hli_inline_fusions_text(const HloModule *m, bool *changed);

/* Record an error on ctx (may be NULL) and return st. */
HloStatus hli_api_fail(HloCtx *ctx, HloStatus st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif

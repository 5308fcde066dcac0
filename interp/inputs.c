/* inputs.c: a run's inputs from files (.npy, .npz, literal text,
 * LiteralProto, a snapshot's recorded result) as buffers of the shapes the
 * module expects, and random inputs. A file's format is sniffed from its
 * bytes, not its name. Not here: snapshots' arguments (proto_io.c). */
#include "config.h"
#include "hlorun.h"
#include "interp/api.h"
#include "interp/valio.h"
#include "proto/proto.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The status of a value reader's failure (valio.h's return codes). */
static HloStatus read_status(int rc) {
  return rc == HLI_READ_MISMATCH ? HLO_TYPE_MISMATCH : HLO_IO_ERROR;
}

/* A .npz member (of hli_npz_open's) as a value of shape want. */
static HloStatus npz_member_value(HloCtx *ctx, const HliNpzMember *mm, const char *name,
                                  const HloShape *want, const char *what, HliValue **out) {
  int rc = hli_npz_member_npy(mm, want, what, &ctx->diags, out);
  if (rc == -2) return hli_api_fail(ctx, HLO_IO_ERROR, "%s: member %s is not a .npy file (bad magic)", what, name);
  return rc == 0 ? HLO_OK : read_status(rc);
}

/* Read a value of shape want from a file's bytes. */
static HloStatus decode_value(HloCtx *ctx, const char *data, size_t len, HlcPager *pg,
                              const HloShape *want, const char *what, HliValue **out) {
  *out = NULL;
  int rc;
  if (hpb_sniff(data, len) == HPB_LITERAL)
    return hli_value_from_proto(ctx, data, len, pg, want, what, out);
  HliFileFormat f = hli_file_format(data, len);
  if (f == HLI_FILE_NPY) {
    if (want->dtype == HLO_TUPLE)
      return hli_api_fail(ctx, HLO_TYPE_MISMATCH, "%s: a .npy file holds one array, but a tuple is "
                  "expected: pass a .npz of its leaves", what);
    rc = hli_npy_read_paged(data, len, want, what, &ctx->diags, pg, out);
    return rc == 0 ? HLO_OK : read_status(rc);
  }
  if (f == HLI_FILE_TEXT && hpb_looks_binary(data, len)) {
    /* Not text: most likely a LiteralProto cut short or corrupted. */
    char why[256];
    hpb_wire_explain(data, len, why, sizeof why);
    return hli_api_fail(ctx, HLO_IO_ERROR, "%s: neither a literal nor a well-formed protocol buffer: %s", what, why);
  }
  if (f == HLI_FILE_TEXT) {
    rc = hli_literal_read(data, len, want, NULL, what, &ctx->diags, out);
    return rc == 0 ? HLO_OK : read_status(rc);
  }
  /* .npz: the leaves of want, depth first, as arr_0, arr_1, ... */
  HliNpzMember *mem;
  int32_t nm;
  if (hli_npz_open_paged(data, len, what, &ctx->diags, pg, &mem, &nm) != 0) return HLO_IO_ERROR;
  if (want->dtype != HLO_TUPLE && nm == 1) {   /* one array: straight into its value */
    HloStatus st = npz_member_value(ctx, &mem[0], "arr_0", want, what, out);
    hli_npz_members_free(mem, nm);
    return st;
  }
  int32_t nl;
  const HloShape **ls = hli_shape_leaves(want, &nl);
  HliValue *v = ls ? hli_value_new(NULL, want) : NULL;
  HliValue **lv = NULL;
  int32_t nlv = 0;
  HloStatus st = HLO_OK;
  if (!v || !(lv = hli_value_leaves(v, &nlv))) { st = hli_api_fail(ctx, HLO_NOMEM, "out of memory"); goto done; }
  if (nm != nl) {
    st = hli_api_fail(ctx, HLO_TYPE_MISMATCH, "%s: the .npz holds %d arrays, the expected %s has %d "
              "leaves", what, (int)nm, want->dtype == HLO_TUPLE ? "tuple" : "array", (int)nl);
    goto done;
  }
  for (int32_t i = 0; i < nl; i++) {
    char name[32], w2[512];
    snprintf(name, sizeof name, "arr_%d", (int)i);
    snprintf(w2, sizeof w2, "%s[%s]", what, name);
    const HliNpzMember *mm = hli_npz_find(mem, nm, name);
    if (!mm) { st = hli_api_fail(ctx, HLO_IO_ERROR, "%s: no member %s.npy", what, name); goto done; }
    HliValue *leaf;
    /* Each leaf is read, then copied into the tuple's buffer: a tuple's
     * largest leaf is held twice for a moment. */
    if ((st = npz_member_value(ctx, mm, name, ls[i], w2, &leaf)) != HLO_OK) goto done;
    hli_value_copy_into(lv[i], leaf);
    hli_value_unref(NULL, leaf);
  }
done:
  free(ls);
  free(lv);
  hli_npz_members_free(mem, nm);
  if (st == HLO_OK) *out = v;
  else hli_value_unref(NULL, v);
  return st;
}

HloStatus hlo_load_param(HloCtx *ctx, const HloModule *m, int index, const char *path,
                         HloBuffer **out) {
  if (!ctx || !m || !path || !out) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  const HloShape *want = hli_param_shape(m, index);
  if (!want || index < 0) return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "the module has no parameter %d", index);
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);
  if (st != HLO_OK) return st;
  char what[1024];
  snprintf(what, sizeof what, "input %d (%s, parameter %s)", index, path,
           m->entry->params[index]->name ? m->entry->params[index]->name : "?");
  HliValue *v;
  HloStatus ds = decode_value(ctx, f.data, f.len, hli_file_pager(&f), want, what, &v);
  if ((st = hli_file_done(ctx, &f, path, ds)) != HLO_OK) {
    if (ds == HLO_OK) hli_value_unref(NULL, v);
    return st;
  }
  return hli_make_buffer(ctx, v, want, out);
}

HloStatus hlo_load_params_npz(HloCtx *ctx, const HloModule *m, int first, const char *path,
                              HloBuffer **out, int *n) {
  if (!ctx || !m || !path || !out || !n) return HLO_INVALID_ARGUMENT;
  int cap = *n;
  *n = 0;
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);
  if (st != HLO_OK) return st;
  HliNpzMember *mem;
  int32_t nm;
  if (hli_npz_open_paged(f.data, f.len, path, &ctx->diags, hli_file_pager(&f), &mem, &nm) != 0)
    return hli_file_done(ctx, &f, path, HLO_IO_ERROR);
  int np = hlo_module_num_params(m);
  if (first + nm > np || nm > cap) {
    hli_npz_members_free(mem, nm);
    hli_file_close(&f);
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "%s holds %d arrays but the module takes %d parameters "
                "(%d of them already given)", path, (int)nm, np, first);
  }
  for (int32_t i = 0; i < nm; i++) {
    char name[32], what[1024];
    snprintf(name, sizeof name, "arr_%d", (int)i);
    const HliNpzMember *mm = hli_npz_find(mem, nm, name);
    const HloShape *want = hli_param_shape(m, first + i);
    snprintf(what, sizeof what, "input %d (%s[%s], parameter %s)", first + i, path, name,
             m->entry->params[first + i]->name);
    HliValue *v = NULL;
    if (!mm) st = hli_api_fail(ctx, HLO_IO_ERROR, "%s: no member %s.npy", path, name);
    else if (want->dtype == HLO_TUPLE)
      st = hli_api_fail(ctx, HLO_TYPE_MISMATCH, "%s: parameter %d is a tuple; pass it as its own .npz",
                what, first + i);
    else
      st = npz_member_value(ctx, mm, name, want, what, &v);
    if (st == HLO_OK) st = hli_make_buffer(ctx, v, want, &out[i]);
    if (st != HLO_OK) {
      for (int32_t k = 0; k < i; k++) { hlo_buffer_free(out[k]); out[k] = NULL; }
      hli_npz_members_free(mem, nm);
      return hli_file_done(ctx, &f, path, st);
    }
  }
  hli_npz_members_free(mem, nm);
  if ((st = hli_file_done(ctx, &f, path, HLO_OK)) != HLO_OK) {
    for (int32_t k = 0; k < nm; k++) { hlo_buffer_free(out[k]); out[k] = NULL; }
    return st;
  }
  *n = nm;
  return HLO_OK;
}

static uint64_t shape_bytes(const HloShape *s);

HloStatus hli_load_shaped(HloCtx *ctx, const HloShape *want, const char *path, const char *member,
                          const char *what, HloBuffer **out) {
  *out = NULL;
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);
  if (st != HLO_OK) return st;
  HliValue *v = NULL;
  if (member) {   /* one member of a .npz, by name */
    HliNpzMember *mem;
    int32_t nm;
    if (hli_npz_open_paged(f.data, f.len, path, &ctx->diags, hli_file_pager(&f), &mem, &nm) != 0)
    return hli_file_done(ctx, &f, path, HLO_IO_ERROR);
    HliNpzMember *mm = (HliNpzMember *)(uintptr_t)hli_npz_find(mem, nm, member);
    int rc;
    if (!mm) st = hli_api_fail(ctx, HLO_IO_ERROR, "%s: no member %s.npy", what, member);
    else if (want->dtype != HLO_TUPLE &&
             (rc = hli_npz_member_npy(mm, want, what, &ctx->diags, &v)) != -2)
      st = rc == 0 ? HLO_OK : read_status(rc);   /* a .npy member: streamed */
    else if (hli_npz_member_bytes(mm, what, &ctx->diags) != 0) st = HLO_IO_ERROR;
    else st = decode_value(ctx, (const char *)mm->data, mm->len, 0, want, what, &v);
    hli_npz_members_free(mem, nm);
  } else {
    st = decode_value(ctx, f.data, f.len, hli_file_pager(&f), want, what, &v);
  }
  HloStatus ds = st;
  if ((st = hli_file_done(ctx, &f, path, ds)) != HLO_OK) {
    if (ds == HLO_OK) hli_value_unref(NULL, v);
    return st;
  }
  return hli_make_buffer(ctx, v, want, out);
}

HloStatus hli_random_shaped(HloCtx *ctx, const HloModule *m, int index, const HloShape *s,
                            uint64_t seed, HloBuffer **out) {
  uint64_t bytes = shape_bytes(s);
  if (ctx->max_memory && bytes > ctx->max_memory)
    return hli_api_fail(ctx, HLO_NOMEM, "parameter %d (%s) needs %llu bytes, more than the memory limit "
                "of %llu bytes", index, m->entry->params[index]->name,
                (unsigned long long)bytes, (unsigned long long)ctx->max_memory);
  HliValue *v = hli_value_new(NULL, s);
  if (!v) return hli_api_fail(ctx, HLO_NOMEM, "out of memory for parameter %d", index);
  hli_fill_random(v, seed * 0x2545f4914f6cdd1dull + (uint64_t)index * 0x9e3779b97f4a7c15ull + 1);
  return hli_make_buffer(ctx, v, s, out);
}

HloStatus hlo_load_like(HloCtx *ctx, const HloBuffer *like, const char *path, HloBuffer **out) {
  if (!ctx || !like || !path || !out) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);
  if (st != HLO_OK) return st;
  HliValue *v;
  /* --expect SNAPSHOT: the result the snapshot recorded. */
  HpbKind kind = hpb_sniff(f.data, f.len);
  st = kind == HPB_SNAPSHOT || kind == HPB_ITERATION || kind == HPB_RUN_LITERALS
           ? hli_value_from_proto(ctx, f.data, f.len, hli_file_pager(&f), like->v->shape, path, &v)
           : decode_value(ctx, f.data, f.len, hli_file_pager(&f), like->v->shape, path, &v);
  HloStatus ds = st;
  if ((st = hli_file_done(ctx, &f, path, ds)) != HLO_OK) {
    if (ds == HLO_OK) hli_value_unref(NULL, v);
    return st;
  }
  return hli_make_buffer(ctx, v, like->v->shape, out);
}

/* Bytes of the array leaves of s (saturating). */
static uint64_t shape_bytes(const HloShape *s) {
  if (s->dtype == HLO_TUPLE) {
    uint64_t t = 0;
    for (int32_t i = 0; i < s->ntuple; i++) {
      uint64_t b = shape_bytes(&s->tuple[i]);
      t = b > UINT64_MAX - t ? UINT64_MAX : t + b;
    }
    return t;
  }
  if (!hlc_dtype_is_array(s->dtype)) return 0;
  uint64_t n = hlc_dtype_size(s->dtype);
  for (int32_t i = 0; i < s->rank; i++) {
    uint64_t d = s->dims[i] < 0 ? 0 : (uint64_t)s->dims[i];
    n = d && n > UINT64_MAX / d ? UINT64_MAX : n * d;
  }
  return n;
}

HloStatus hlo_random_param(HloCtx *ctx, const HloModule *m, int index, uint64_t seed,
                           HloBuffer **out) {
  if (!ctx || !m || !out) return HLO_INVALID_ARGUMENT;
  const HloShape *s = hli_param_shape(m, index);
  if (!s || index < 0) return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "the module has no parameter %d", index);
  return hli_random_shaped(ctx, m, index, s, seed, out);
}

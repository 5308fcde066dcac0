/* call.c: what a GPU-family handler learns of its instruction at
 * instantiate time: the members attribute (shapes, layouts, window,
 * dim_labels, the verbatim backend_config) and typed reads of proto3 JSON
 * fields (int64 as numbers or strings, enums by name or number, missing
 * fields as defaults), with errors that name the instruction and the field.
 * Not here: what any target computes. */
#include "targets/gpu/gpu.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hlt_gpu_fail(GpuCall *c, const char *fmt, ...) {
  if (c->err) return -1;
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t n = strlen(c->name) + strlen(msg) + 64;
  c->err = malloc(n);
  if (c->err) snprintf(c->err, n, "%%%s: %s", c->name, msg);
  return -1;
}

static void *attr(const XLA_FFI_Attrs *a, const char *name, XLA_FFI_AttrType t) {
  return a ? hlorun_ffi_attr(a, name, t) : NULL;
}

static const char *span_dup(const XLA_FFI_ByteSpan *b, char *buf, size_t n) {
  if (!b) return NULL;
  size_t k = b->len < n - 1 ? b->len : n - 1;
  memcpy(buf, b->ptr, k);
  buf[k] = 0;
  return buf;
}

static int read_i64s(const XLA_FFI_Attrs *a, const char *name, int64_t *v, int max) {
  XLA_FFI_Array *arr = attr(a, name, XLA_FFI_AttrType_ARRAY);
  if (!arr || arr->dtype != XLA_FFI_DataType_S64 || arr->size > (size_t)max) return -1;
  if (arr->size) memcpy(v, arr->data, arr->size * sizeof *v);
  return (int)arr->size;
}

/* The leaves of members dictionary `which` ("operands"/"results"). */
static int read_leaves(GpuCall *c, const XLA_FFI_Attrs *mem, const char *which, GpuLeaf *out,
                       int *n) {
  const XLA_FFI_Attrs *d = attr(mem, which, XLA_FFI_AttrType_DICTIONARY);
  if (!d) return hlt_gpu_fail(c, "no %s in the instruction members", which);
  if (d->size > GPU_MAX_LEAVES)
    return hlt_gpu_fail(c, "%lld %s: at most %d are supported", (long long)d->size, which,
                        GPU_MAX_LEAVES);
  for (int64_t i = 0; i < d->size; i++) {
    char key[16], dt[32];
    snprintf(key, sizeof key, "%d", (int)i);
    const XLA_FFI_Attrs *l = attr(d, key, XLA_FFI_AttrType_DICTIONARY);
    const char *dts = l ? span_dup(attr(l, "dtype", XLA_FFI_AttrType_STRING), dt, sizeof dt) : NULL;
    GpuLeaf *g = &out[i];
    g->dtype = dts ? hlc_dtype_from_name(dts, strlen(dts)) : HLO_DTYPE_INVALID;
    g->rank = l ? read_i64s(l, "dims", g->dims, GPU_MAX_RANK) : -1;
    if (g->dtype == HLO_DTYPE_INVALID || g->rank < 0 ||
        read_i64s(l, "layout", g->layout, GPU_MAX_RANK) != g->rank)
      return hlt_gpu_fail(c, "%s %d: unreadable or rank above %d", which, (int)i, GPU_MAX_RANK);
  }
  *n = (int)d->size;
  return 0;
}

static int read_window(GpuCall *c, const XLA_FFI_Attrs *mem) {
  const XLA_FFI_Attrs *w = attr(mem, "window", XLA_FFI_AttrType_DICTIONARY);
  if (!w) return 0;
  int n = read_i64s(w, "size", c->wsize, GPU_MAX_RANK);
  XLA_FFI_Array *rev = attr(w, "window_reversal", XLA_FFI_AttrType_ARRAY);
  if (n < 0 || read_i64s(w, "stride", c->wstride, GPU_MAX_RANK) != n ||
      read_i64s(w, "pad_low", c->wpad_lo, GPU_MAX_RANK) != n ||
      read_i64s(w, "pad_high", c->wpad_hi, GPU_MAX_RANK) != n ||
      read_i64s(w, "lhs_dilation", c->wlhs_dil, GPU_MAX_RANK) != n ||
      read_i64s(w, "rhs_dilation", c->wrhs_dil, GPU_MAX_RANK) != n || !rev ||
      rev->size != (size_t)n)
    return hlt_gpu_fail(c, "window: unreadable members");
  memcpy(c->wrev, rev->data, (size_t)n);
  c->wrank = n;
  return 0;
}

int hlt_gpu_call_init(GpuCall *c, XLA_FFI_CallFrame *f) {
  memset(c, 0, sizeof *c);
  strcpy(c->name, "?");
  c->attrs = &f->attrs;
  const XLA_FFI_Attrs *mem = attr(&f->attrs, HLORUN_FFI_INSTRUCTION_ATTR,
                                  XLA_FFI_AttrType_DICTIONARY);
  if (!mem) return hlt_gpu_fail(c, "the FFI host passed no instruction members");
  span_dup(attr(mem, "name", XLA_FFI_AttrType_STRING), c->name, sizeof c->name);
  XLA_FFI_ByteSpan *tg = attr(mem, "target", XLA_FFI_AttrType_STRING);
  c->target = "";
  if (tg) {
    char *t = malloc(tg->len + 1);
    if (!t) return hlt_gpu_fail(c, "out of memory");
    memcpy(t, tg->ptr, tg->len);
    t[tg->len] = 0;
    c->target = t;
  }
  XLA_FFI_ByteSpan *dl = attr(mem, "dim_labels", XLA_FFI_AttrType_STRING);
  if (dl) {
    char *t = malloc(dl->len + 1);
    if (!t) return hlt_gpu_fail(c, "out of memory");
    memcpy(t, dl->ptr, dl->len);
    t[dl->len] = 0;
    c->dim_labels = t;
  }
  XLA_FFI_Scalar *fg = attr(mem, "feature_group_count", XLA_FFI_AttrType_SCALAR);
  c->feature_group_count = fg ? *(int64_t *)fg->value : 1;
  if (read_leaves(c, mem, "operands", c->ops, &c->nops) ||
      read_leaves(c, mem, "results", c->res, &c->nres) || read_window(c, mem))
    return -1;
  XLA_FFI_ByteSpan *bc = attr(mem, "backend_config", XLA_FFI_AttrType_STRING);
  if (!bc || bc->len == 0) return 0;   /* targets that need one say so */
  json_error_t je;
  c->config = json_loadb(bc->ptr, bc->len, JSON_REJECT_DUPLICATES, &je);
  if (!c->config)
    return hlt_gpu_fail(c, "backend_config is not valid JSON: %s (at character %d of the config)",
                        je.text, je.position);
  if (!json_is_object(c->config)) return hlt_gpu_fail(c, "backend_config must be a JSON object");
  return 0;
}

void hlt_gpu_call_free(GpuCall *c) {
  json_decref(c->config);
  if (c->target && *c->target) free((char *)c->target);
  free((char *)c->dim_labels);
  free(c->err);
  memset(c, 0, sizeof *c);
}

json_t *hlt_gpu_config_section(GpuCall *c, const char *key, const char *bare_key) {
  if (!c->config) {
    hlt_gpu_fail(c, "backend_config: missing; %s needs a \"%s\"", c->target, key);
    return NULL;
  }
  json_t *o = json_object_get(c->config, key);
  if (o) {
    if (!json_is_object(o)) hlt_gpu_fail(c, "backend_config field %s: expected an object", key);
    return json_is_object(o) ? o : NULL;
  }
  if (bare_key && json_object_get(c->config, bare_key)) return c->config;
  hlt_gpu_fail(c, "backend_config: missing required field %s", key);
  return NULL;
}

/* ---- proto3 JSON scalars ---------------------------------------------------- */

static int parse_double(json_t *v, double *out) {
  if (json_is_number(v)) { *out = json_number_value(v); return 0; }
  if (!json_is_string(v)) return -1;
  const char *s = json_string_value(v);
  if (!strcmp(s, "NaN")) { *out = __builtin_nan(""); return 0; }
  if (!strcmp(s, "Infinity")) { *out = __builtin_inf(); return 0; }
  if (!strcmp(s, "-Infinity")) { *out = -__builtin_inf(); return 0; }
  char *e;
  errno = 0;
  *out = strtod(s, &e);
  return *s && !*e && !errno ? 0 : -1;
}

static int parse_int(json_t *v, int64_t *out) {
  if (json_is_integer(v)) { *out = json_integer_value(v); return 0; }
  if (!json_is_string(v)) return -1;
  const char *s = json_string_value(v);
  char *e;
  errno = 0;
  long long x = strtoll(s, &e, 10);
  if (!*s || *e || errno) return -1;
  *out = x;
  return 0;
}

int hlt_gpu_json_double(GpuCall *c, json_t *obj, const char *key, const char *path, double def,
                        double *out) {
  json_t *v = json_object_get(obj, key);
  if (!v) { *out = def; return 0; }
  if (parse_double(v, out))
    return hlt_gpu_fail(c, "backend_config field %s: expected a number", path);
  return 0;
}

int hlt_gpu_json_double_req(GpuCall *c, json_t *obj, const char *key, const char *path,
                            double *out) {
  if (!json_object_get(obj, key))
    return hlt_gpu_fail(c, "backend_config: missing required field %s", path);
  return hlt_gpu_json_double(c, obj, key, path, 0, out);
}

int hlt_gpu_json_int(GpuCall *c, json_t *obj, const char *key, const char *path, int64_t def,
                     int64_t *out) {
  json_t *v = json_object_get(obj, key);
  if (!v) { *out = def; return 0; }
  if (parse_int(v, out))
    return hlt_gpu_fail(
        c, "backend_config field %s: expected an integer (number or decimal string)", path);
  return 0;
}

int hlt_gpu_json_bool(GpuCall *c, json_t *obj, const char *key, const char *path, bool def,
                      bool *out) {
  json_t *v = json_object_get(obj, key);
  if (!v) { *out = def; return 0; }
  if (!json_is_boolean(v))
    return hlt_gpu_fail(c, "backend_config field %s: expected true or false", path);
  *out = json_is_true(v);
  return 0;
}

int hlt_gpu_json_ints(GpuCall *c, json_t *obj, const char *key, const char *path, int64_t *v,
                      int max, int *n) {
  json_t *a = json_object_get(obj, key);
  *n = 0;
  if (!a) return 0;
  if (!json_is_array(a) || json_array_size(a) > (size_t)max)
    return hlt_gpu_fail(c, "backend_config field %s: expected a list of at most %d integers", path,
                        max);
  for (size_t i = 0; i < json_array_size(a); i++)
    if (parse_int(json_array_get(a, i), &v[i]))
      return hlt_gpu_fail(c, "backend_config field %s[%zu]: expected an integer", path, i);
  *n = (int)json_array_size(a);
  return 0;
}

int hlt_gpu_json_enum(GpuCall *c, json_t *obj, const char *key, const char *path,
                      const char *const *names, int nnames, int def, int *out) {
  json_t *v = json_object_get(obj, key);
  if (!v) { *out = def; return 0; }
  int64_t k;
  if (json_is_string(v))
    for (int i = 0; i < nnames; i++)
      if (names[i] && !strcmp(json_string_value(v), names[i])) { *out = i; return 0; }
  if (parse_int(v, &k) == 0 && k >= 0 && k < nnames && names[k]) { *out = (int)k; return 0; }
  char list[512];
  size_t n = 0;
  list[0] = 0;
  for (int i = 0; i < nnames && n < sizeof list - 32; i++)
    if (names[i]) n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", names[i]);
  return hlt_gpu_fail(c, "backend_config field %s: expected one of %s (or its number)", path, list);
}

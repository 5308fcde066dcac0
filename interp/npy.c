/* npy.c: .npy and .npz encoding and decoding of values, in memory.
 *
 * .npy: magic, version (1.0, 2.0 or 3.0), a little-endian header length and
 * a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)},
 * then the elements. Element types follow spec/cli.md: narrow floats as raw
 * bits (<V2, |V1), sub-byte integers one per byte (|i1/|u1). Big-endian
 * data is byte-swapped, Fortran order transposed; any other mismatch with
 * the wanted shape is an error.
 * .npz: a zip archive of .npy members. Members may be stored or deflated
 * (zlib); zip64 sizes are understood. We write stored members.
 * Not here: files (callers read/write them), literal text (literal_io.c). */
#include "interp/valio.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

/* ---- dtype <-> descr ----------------------------------------------------- */

const char *hli_npy_descr(HloDtype t) {
  switch (t) {
  case HLO_PRED: return "|b1";
  case HLO_S8: case HLO_S4: case HLO_S2: case HLO_S1: return "|i1";
  case HLO_U8: case HLO_U4: case HLO_U2: case HLO_U1: return "|u1";
  case HLO_S16: return "<i2";
  case HLO_U16: return "<u2";
  case HLO_S32: return "<i4";
  case HLO_U32: return "<u4";
  case HLO_S64: return "<i8";
  case HLO_U64: return "<u8";
  case HLO_F16: return "<f2";
  case HLO_F32: return "<f4";
  case HLO_F64: return "<f8";
  case HLO_C64: return "<c8";
  case HLO_C128: return "<c16";
  case HLO_BF16: return "<V2";
  default:
    if (hlc_dtype_kind(t) == HLO_KIND_FLOAT && hlc_dtype_size(t) == 1) return "|V1";
    return NULL;
  }
}

/* Does the file's descr store elements of type t? '<', '|' and '=' all mean
 * little-endian/no order here; '>' is accepted and byte-swapped. */
static bool descr_matches(const char *file, HloDtype t, bool *swap) {
  const char *want = hli_npy_descr(t);
  *swap = false;
  if (!want || !file[0]) return false;
  char o = file[0];
  const char *body = file;
  if (o == '<' || o == '|' || o == '=' || o == '>') body = file + 1;
  else o = '|';
  if (strcmp(body, want + 1) != 0) return false;
  if (o == '>' && hlc_dtype_size(t) > 1) *swap = true;
  return true;
}

/* Human name of a descr for messages: "<f4 (f32)". */
static const char *descr_type(const char *descr) {
  static const struct { const char *d; const char *t; } map[] = {
    {"b1", "pred"}, {"i1", "s8"}, {"u1", "u8"}, {"i2", "s16"}, {"u2", "u16"}, {"i4", "s32"},
    {"u4", "u32"}, {"i8", "s64"}, {"u8", "u64"}, {"f2", "f16"}, {"f4", "f32"}, {"f8", "f64"},
    {"c8", "c64"}, {"c16", "c128"}, {"V2", "raw 16-bit (bf16)"}, {"V1", "raw 8-bit (f8)"},
  };
  const char *b = descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=' ? descr + 1 : descr;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(b, map[i].d) == 0) return map[i].t;
  return "unsupported";
}

/* ---- .npy header ---------------------------------------------------------- */

static const char *find_key(const char *h, size_t n, const char *key) {
  size_t kl = strlen(key);
  for (size_t i = 0; i + kl + 2 <= n; i++)
    if ((h[i] == '\'' || h[i] == '"') && memcmp(h + i + 1, key, kl) == 0 && h[i + 1 + kl] == h[i]) {
      const char *p = h + i + kl + 2;
      while (p < h + n && (*p == ' ' || *p == ':')) p++;
      return p;
    }
  return NULL;
}

int hli_npy_info(const void *data, size_t len, const char *what, HlcDiags *d, HliNpyInfo *info) {
  const unsigned char *u = data;
  memset(info, 0, sizeof *info);
  if (len < 10 || memcmp(u, "\x93NUMPY", 6) != 0) {
    hlc_diag(d, HLC_ERROR, "%s: not a .npy file (bad magic)", what);
    return -1;
  }
  size_t hlen, hoff;
  if (u[6] == 1) { hlen = (size_t)u[8] | (size_t)u[9] << 8; hoff = 10; }
  else if ((u[6] == 2 || u[6] == 3) && len >= 12) {
    hlen = (size_t)u[8] | (size_t)u[9] << 8 | (size_t)u[10] << 16 | (size_t)u[11] << 24;
    hoff = 12;
  } else {
    hlc_diag(d, HLC_ERROR, "%s: unsupported .npy version %d.%d", what, u[6], u[7]);
    return -1;
  }
  if (hlen > len - hoff) {
    hlc_diag(d, HLC_ERROR, "%s: truncated .npy header", what);
    return -1;
  }
  const char *h = (const char *)u + hoff;
  const char *end = h + hlen;
  const char *p = find_key(h, hlen, "descr");
  if (!p || p >= end || (*p != '\'' && *p != '"')) {
    hlc_diag(d, HLC_ERROR, "%s: .npy header without a descr (structured dtypes are not supported)",
             what);
    return -1;
  }
  char q = *p++;
  size_t dl = 0;
  while (p + dl < end && p[dl] != q) dl++;
  if (dl == 0 || dl >= sizeof info->descr) {
    hlc_diag(d, HLC_ERROR, "%s: unsupported .npy descr", what);
    return -1;
  }
  memcpy(info->descr, p, dl);
  p = find_key(h, hlen, "fortran_order");
  info->fortran = p && end - p >= 4 && memcmp(p, "True", 4) == 0;
  p = find_key(h, hlen, "shape");
  if (!p || p >= end || *p != '(') {
    hlc_diag(d, HLC_ERROR, "%s: .npy header without a shape", what);
    return -1;
  }
  p++;
  for (;;) {
    while (p < end && (*p == ' ' || *p == ',')) p++;
    if (p >= end) { hlc_diag(d, HLC_ERROR, "%s: bad .npy shape", what); return -1; }
    if (*p == ')') break;
    /* Digits by hand: the header is not NUL-terminated, so no strtoll. */
    const char *e = p;
    int64_t v = 0;
    while (e < end && *e >= '0' && *e <= '9' && v <= (INT64_MAX - 9) / 10) v = v * 10 + (*e++ - '0');
    if (e == p || (e < end && *e >= '0' && *e <= '9') || info->rank >= 32) {
      hlc_diag(d, HLC_ERROR, "%s: bad .npy shape", what);
      return -1;
    }
    info->dims[info->rank++] = v;
    p = e;
    while (p < end && (*p == 'L')) p++;   /* Python 2 longs */
  }
  info->data_off = hoff + hlen;
  return 0;
}

static void shape_str(const int64_t *dims, int32_t rank, char *buf, size_t n) {
  size_t o = (size_t)snprintf(buf, n, "(");
  for (int32_t i = 0; i < rank && o < n; i++)
    o += (size_t)snprintf(buf + o, n - o, "%s%lld", i ? ", " : "", (long long)dims[i]);
  if (o < n) snprintf(buf + o, n - o, rank == 1 ? ",)" : ")");
}

/* Check the element values a raw-bits or narrow integer type may hold. */
static int check_range(const HliValue *v, const char *what, HlcDiags *d) {
  HloDtype t = v->dtype;
  int bits = hlc_dtype_bits(t);
  const uint8_t *u = v->data;
  if (t == HLO_PRED) return 0;
  if (hlc_dtype_is_int(t) && bits < 8) {
    bool sgn = hlc_dtype_kind(t) == HLO_KIND_SINT;
    int lo = sgn ? -(1 << (bits - 1)) : 0, hi = sgn ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
    for (int64_t i = 0; i < v->nelem; i++) {
      int x = sgn ? (int)(int8_t)u[i] : (int)u[i];
      if (x < lo || x > hi) {
        hlc_diag(d, HLC_ERROR, "%s: element %lld is %d, out of range for %s", what, (long long)i,
                 x, hlc_dtype_name(t));
        return HLI_READ_MISMATCH;
      }
    }
  }
  return 0;
}

/* Fortran order -> C order (column-major to row-major). */
static void from_fortran(HliValue *v, const void *src) {
  size_t es = hlc_dtype_size(v->dtype);
  int64_t idx[32] = {0}, cstr[32];
  hli_strides(v->dims, v->rank, cstr);
  const char *s = src;
  char *dst = v->data;
  for (int64_t f = 0; f < v->nelem; f++) {
    int64_t c = 0;
    for (int32_t k = 0; k < v->rank; k++) c += idx[k] * cstr[k];
    memcpy(dst + (size_t)c * es, s + (size_t)f * es, es);
    for (int32_t k = 0; k < v->rank; k++) {   /* first index fastest */
      if (++idx[k] < v->dims[k]) break;
      idx[k] = 0;
    }
  }
}

/* Check a .npy header against the wanted shape, and that avail bytes hold
 * its data; *swap: byte-swap needed. Nothing is allocated before this
 * passes: the header alone must not make us allocate (a few bytes could
 * declare terabytes). */
static int npy_check(const HliNpyInfo *info, size_t avail, const HloShape *want, const char *what,
                     HlcDiags *d, bool *swap) {
  if (!hlc_dtype_is_array(want->dtype)) {
    hlc_diag(d, HLC_ERROR, "%s: a .npy file cannot hold a value of type %s", what,
             hlc_dtype_name(want->dtype));
    return -1;
  }
  if (!descr_matches(info->descr, want->dtype, swap)) {
    const char *wd = hli_npy_descr(want->dtype);
    hlc_diag(d, HLC_ERROR, "%s: dtype %s (%s) does not match the expected type %s (stored as %s)",
             what, info->descr, descr_type(info->descr), hlc_dtype_name(want->dtype),
             wd ? wd : "nothing: unsupported in .npy");
    return HLI_READ_MISMATCH;
  }
  bool same = info->rank == want->rank;
  for (int32_t i = 0; same && i < want->rank; i++) same = info->dims[i] == want->dims[i];
  if (!same) {
    char got[256], exp[256];
    shape_str(info->dims, info->rank, got, sizeof got);
    shape_str(want->dims, want->rank, exp, sizeof exp);
    hlc_diag(d, HLC_ERROR, "%s: shape %s does not match the expected %s %s", what, got,
             hlc_dtype_name(want->dtype), exp);
    return HLI_READ_MISMATCH;
  }
  size_t need = hlc_dtype_size(want->dtype);
  bool empty = false, huge = false;
  for (int32_t i = 0; i < want->rank; i++) {
    if (want->dims[i] == 0) empty = true;
    else if (huge || __builtin_mul_overflow(need, (size_t)want->dims[i], &need)) huge = true;
  }
  if (empty) need = 0;
  else if (huge) need = SIZE_MAX;
  if (avail < need) {
    hlc_diag(d, HLC_ERROR, "%s: truncated data: %zu bytes, %zu expected", what, avail, need);
    return -1;
  }
  return 0;
}

/* After the elements are in v's buffer (row-major): byte order, pred's
 * 0/1, sub-byte ranges. */
static int npy_finish(HliValue *v, bool swap, const char *what, HlcDiags *d) {
  if (swap) {
    size_t es = hlc_dtype_size(v->dtype), part = hlc_dtype_is_complex(v->dtype) ? es / 2 : es;
    unsigned char *b = v->data;
    for (size_t i = 0; i < v->nbytes; i += part)
      for (size_t k = 0; k < part / 2; k++) {
        unsigned char c = b[i + k];
        b[i + k] = b[i + part - 1 - k];
        b[i + part - 1 - k] = c;
      }
  }
  if (v->dtype == HLO_PRED) {
    unsigned char *b = v->data;
    for (int64_t i = 0; i < v->nelem; i++) b[i] = b[i] != 0;
  }
  return check_range(v, what, d);
}

/* The .npy header's bytes of a paged image: the 10- or 12-byte preamble,
 * then the header its length field gives. */
static void need_header(HlcPager *pg, const unsigned char *u, size_t len) {
  if (!pg) return;
  size_t pre = len < 12 ? len : 12;
  hlc_need(pg, u, pre);
  if (pre < 10) return;
  size_t hoff = u[6] == 1 ? 10 : 12, hlen = (size_t)u[8] | (size_t)u[9] << 8;
  if (u[6] != 1 && pre == 12) hlen |= (size_t)u[10] << 16 | (size_t)u[11] << 24;
  hlc_need(pg, u, hoff + hlen < len ? hoff + hlen : len);
}

int hli_npy_read_paged(const void *data, size_t len, const HloShape *want, const char *what,
                       HlcDiags *d, HlcPager *pg, HliValue **out) {
  *out = NULL;
  HliNpyInfo info;
  bool swap;
  need_header(pg, data, len);
  if (hli_npy_info(data, len, what, d, &info) != 0) return -1;
  int rc = npy_check(&info, len - info.data_off, want, what, d, &swap);
  if (rc != 0) return rc;
  HliValue *v = hli_value_new(NULL, want);
  if (!v) { hlc_diag(d, HLC_ERROR, "%s: out of memory", what); return -1; }
  const unsigned char *src = (const unsigned char *)data + info.data_off;
  if (info.fortran && v->rank > 1) {
    hlc_need(pg, src, v->nbytes);   /* scattered reads: held whole, given back after */
    from_fortran(v, src);
    hlc_done(pg, src, v->nbytes);
  } else {
    hlc_copy(pg, v->data, src, v->nbytes);   /* a paged file: read straight into the value */
  }
  if ((rc = npy_finish(v, swap, what, d)) != 0) { hli_value_unref(NULL, v); return rc; }
  *out = v;
  return 0;
}

int hli_npy_read(const void *data, size_t len, const HloShape *want, const char *what,
                 HlcDiags *d, HliValue **out) {
  return hli_npy_read_paged(data, len, want, what, d, NULL, out);
}

int hli_npy_write(const HliValue *v, HlcText *b, HlcDiags *d) {
  const char *descr = hli_npy_descr(v->dtype);
  if (!descr || v->dtype == HLO_TUPLE) {
    hlc_diag(d, HLC_ERROR, "a value of type %s cannot be written to .npy",
             hlc_dtype_name(v->dtype));
    return -1;
  }
  HlcText h = {0};
  hlc_text_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int32_t i = 0; i < v->rank; i++)
    hlc_text_printf(&h, "%s%lld", i ? ", " : "", (long long)v->dims[i]);
  hlc_text_puts(&h, v->rank == 1 ? ",), }" : "), }");
  /* Pad with spaces and a newline so the data starts 64-byte aligned. */
  size_t pre = h.n + 1 + 10 > 65535 ? 12 : 10;
  size_t total = (pre + h.n + 1 + 63) / 64 * 64;
  while (pre + h.n + 1 < total) hlc_text_put(&h, " ", 1);
  hlc_text_put(&h, "\n", 1);
  if (h.oom) { hlc_text_free(&h); hlc_diag(d, HLC_ERROR, "out of memory"); return -1; }
  unsigned char magic[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  if (pre == 10) {
    magic[8] = (unsigned char)(h.n & 0xff);
    magic[9] = (unsigned char)(h.n >> 8);
  } else {
    magic[6] = 2;
    for (int k = 0; k < 4; k++) magic[8 + k] = (unsigned char)(h.n >> (8 * k));
  }
  hlc_text_put(b, magic, pre);
  hlc_text_put(b, h.p, h.n);
  hlc_text_free(&h);
  hlc_text_put(b, v->data, v->nbytes);
  if (b->oom) { hlc_diag(d, HLC_ERROR, "out of memory"); return -1; }
  return 0;
}

/* ---- leaves ---------------------------------------------------------------- */

static void leaves_rec(HliValue *v, HliValue **out, int32_t *n) {
  if (v->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple; i++) leaves_rec(v->tuple[i], out, n);
    return;
  }
  if (out) out[*n] = v;
  (*n)++;
}

HliValue **hli_value_leaves(HliValue *v, int32_t *n) {
  *n = 0;
  leaves_rec(v, NULL, n);
  HliValue **a = malloc((size_t)(*n ? *n : 1) * sizeof *a);
  if (!a) return NULL;
  *n = 0;
  leaves_rec(v, a, n);
  return a;
}

static void shape_leaves_rec(const HloShape *s, const HloShape **out, int32_t *n) {
  if (s->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < s->ntuple; i++) shape_leaves_rec(&s->tuple[i], out, n);
    return;
  }
  if (out) out[*n] = s;
  (*n)++;
}

const HloShape **hli_shape_leaves(const HloShape *s, int32_t *n) {
  *n = 0;
  shape_leaves_rec(s, NULL, n);
  const HloShape **a = malloc((size_t)(*n ? *n : 1) * sizeof *a);
  if (!a) return NULL;
  *n = 0;
  shape_leaves_rec(s, a, n);
  return a;
}

/* ---- .npz (zip) ------------------------------------------------------------ */

static uint32_t rd16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static void wr16(HlcText *b, uint32_t v) {
  unsigned char c[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
  hlc_text_put(b, c, 2);
}
static void wr32(HlcText *b, uint32_t v) { wr16(b, v & 0xffff); wr16(b, v >> 16); }
static void wr64(HlcText *b, uint64_t v) { wr32(b, (uint32_t)v); wr32(b, (uint32_t)(v >> 32)); }

void hli_npz_members_free(HliNpzMember *m, int32_t n) {
  for (int32_t i = 0; m && i < n; i++) {
    free(m[i].name);
    if (!m[i].borrowed) free(m[i].data);
  }
  free(m);
}

static int inflate_member(const unsigned char *src, size_t clen, unsigned char *dst, size_t ulen) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return -1;   /* raw deflate */
  int rc = 0;
  size_t in_done = 0, out_done = 0;
  for (;;) {
    /* zlib counts in uInt: feed large members in pieces. */
    uInt ci = (uInt)(clen - in_done > (1u << 30) ? (1u << 30) : clen - in_done);
    uInt co = (uInt)(ulen - out_done > (1u << 30) ? (1u << 30) : ulen - out_done);
    z.next_in = (Bytef *)(uintptr_t)(src + in_done);
    z.avail_in = ci;
    z.next_out = dst + out_done;
    z.avail_out = co;
    int r = inflate(&z, Z_NO_FLUSH);
    in_done += ci - z.avail_in;
    out_done += co - z.avail_out;
    if (r == Z_STREAM_END) break;
    if (r != Z_OK && r != Z_BUF_ERROR) { rc = -1; break; }
    if ((ci == 0 || z.avail_in == ci) && (co == 0 || z.avail_out == co)) { rc = -1; break; }
  }
  inflateEnd(&z);
  return rc == 0 && out_done == ulen ? 0 : -1;
}

static int npz_read(const void *data, size_t len, const char *what, HlcDiags *d, bool lazy,
                    HlcPager *pg, HliNpzMember **members, int32_t *n) {
  const unsigned char *u = data;
  *members = NULL;
  *n = 0;
  /* A paged image: every piece of the zip's structure is read before it is
   * looked at; members' data only when a member is read. */
  size_t tail = len < 65535 + 22 ? len : 65535 + 22;
  hlc_need(pg, u + len - tail, tail);
  /* End of central directory: the last "PK\5\6" within 64 KiB of the end. */
  size_t eocd = (size_t)-1;
  for (size_t i = len >= 22 ? len - 22 : 0; len >= 22; i--) {
    if (rd32(u + i) == 0x06054b50) { eocd = i; break; }
    if (i == 0 || len - i > 65535 + 22) break;
  }
  if (eocd == (size_t)-1) {
    hlc_diag(d, HLC_ERROR, "%s: not a .npz file (no zip directory)", what);
    return -1;
  }
  uint64_t count = rd16(u + eocd + 10), cdoff = rd32(u + eocd + 16);
  /* Zip64: the locator sits right before the end record. */
  if ((count == 0xffff || cdoff == 0xffffffffu) && eocd >= 20 && rd32(u + eocd - 20) == 0x07064b50) {
    uint64_t z64 = rd64(u + eocd - 20 + 8);
    if (z64 + 56 <= len) hlc_need(pg, u + z64, 56);
    if (z64 + 56 <= len && rd32(u + z64) == 0x06064b50) {
      count = rd64(u + z64 + 32);
      cdoff = rd64(u + z64 + 48);
    }
  }
  if (cdoff > len || count > len / 46 + 1) {
    hlc_diag(d, HLC_ERROR, "%s: corrupt zip directory", what);
    return -1;
  }
  HliNpzMember *m = calloc(count ? count : 1, sizeof *m);
  if (!m) { hlc_diag(d, HLC_ERROR, "%s: out of memory", what); return -1; }
  size_t p = cdoff;
  int32_t k = 0;
  for (uint64_t e = 0; e < count; e++) {
    if (p + 46 > len) goto corrupt;
    hlc_need(pg, u + p, 46);
    if (rd32(u + p) != 0x02014b50) goto corrupt;
    uint32_t method = rd16(u + p + 10), nl = rd16(u + p + 28), xl = rd16(u + p + 30),
             cl = rd16(u + p + 32), flags = rd16(u + p + 8);
    uint64_t csize = rd32(u + p + 20), usize = rd32(u + p + 24), loff = rd32(u + p + 42);
    if (p + 46 + nl + xl > len) goto corrupt;
    hlc_need(pg, u + p + 46, p + 46 + nl + xl + cl <= len ? nl + xl + cl : nl + xl);
    /* Zip64 extra field: the 0xffffffff fields, in order. */
    for (size_t x = p + 46 + nl; x + 4 <= p + 46 + nl + xl;) {
      uint32_t id = rd16(u + x), sz = rd16(u + x + 2);
      if (x + 4 + sz > p + 46 + nl + xl) break;
      if (id == 1) {
        size_t q = x + 4, qe = x + 4 + sz;
        if (usize == 0xffffffffu && q + 8 <= qe) { usize = rd64(u + q); q += 8; }
        if (csize == 0xffffffffu && q + 8 <= qe) { csize = rd64(u + q); q += 8; }
        if (loff == 0xffffffffu && q + 8 <= qe) { loff = rd64(u + q); q += 8; }
      }
      x += 4 + sz;
    }
    m[k].name = strndup((const char *)u + p + 46, nl);
    if (!m[k].name) goto nomem;
    k++;
    p += 46 + nl + xl + cl;
    if (flags & 1) {
      hlc_diag(d, HLC_ERROR, "%s: member %s is encrypted", what, m[k - 1].name);
      goto fail;
    }
    if (loff + 30 > len) goto corrupt;
    hlc_need(pg, u + loff, 30);
    if (rd32(u + loff) != 0x04034b50) goto corrupt;
    uint64_t start = loff + 30 + rd16(u + loff + 26) + rd16(u + loff + 28);
    if (start > len || csize > len - start) goto corrupt;
    /* The declared size is checked before it is allocated: stored members
     * are exactly their compressed size, and deflate never expands more
     * than 1032:1, so a small file cannot ask for gigabytes. */
    if (method != 0 && method != 8) {
      hlc_diag(d, HLC_ERROR, "%s: member %s uses zip compression method %u (only stored and "
               "deflated are supported)", what, m[k - 1].name, method);
      goto fail;
    }
    if ((method == 0 && usize != csize) || (method == 8 && usize / 1032 > csize + 1)) goto corrupt;
    m[k - 1].len = usize;
    m[k - 1].pager = pg;
    if (lazy) {   /* stored: the archive's own bytes; deflated: inflated when read */
      if (method == 0) {
        m[k - 1].data = (unsigned char *)(uintptr_t)(u + start);
        m[k - 1].borrowed = true;
      } else {
        m[k - 1].src = u + start;
        m[k - 1].csize = csize;
      }
      continue;
    }
    m[k - 1].data = malloc(usize ? usize : 1);
    if (!m[k - 1].data) goto nomem;
    hlc_need(pg, u + start, csize);
    int bad = 0;
    if (method == 0) {
      if (csize != usize) goto corrupt;
      memcpy(m[k - 1].data, u + start, usize);
    } else if (method == 8) {
      bad = inflate_member(u + start, csize, m[k - 1].data, usize);
    }
    hlc_done(pg, u + start, csize);
    if (bad) {
      hlc_diag(d, HLC_ERROR, "%s: member %s: corrupt deflate data", what, m[k - 1].name);
      goto fail;
    }
  }
  *members = m;
  *n = k;
  return 0;
corrupt:
  hlc_diag(d, HLC_ERROR, "%s: corrupt .npz (zip) file", what);
  goto fail;
nomem:
  hlc_diag(d, HLC_ERROR, "%s: out of memory", what);
fail:
  hli_npz_members_free(m, k);
  return -1;
}

int hli_npz_read(const void *data, size_t len, const char *what, HlcDiags *d,
                 HliNpzMember **members, int32_t *n) {
  return npz_read(data, len, what, d, false, NULL, members, n);
}

int hli_npz_open(const void *data, size_t len, const char *what, HlcDiags *d,
                 HliNpzMember **members, int32_t *n) {
  return npz_read(data, len, what, d, true, NULL, members, n);
}

int hli_npz_open_paged(const void *data, size_t len, const char *what, HlcDiags *d, HlcPager *pg,
                       HliNpzMember **members, int32_t *n) {
  return npz_read(data, len, what, d, true, pg, members, n);
}

int hli_npz_member_bytes(HliNpzMember *m, const char *what, HlcDiags *d) {
  if (m->data) {   /* a stored member: the archive's bytes, read whole if paged */
    if (m->borrowed) hlc_need(m->pager, m->data, m->len);
    return 0;
  }
  m->data = malloc(m->len ? m->len : 1);
  if (!m->data) { hlc_diag(d, HLC_ERROR, "%s: out of memory", what); return -1; }
  hlc_need(m->pager, m->src, m->csize);
  int bad = inflate_member(m->src, m->csize, m->data, m->len);
  hlc_done(m->pager, m->src, m->csize);
  if (bad) {
    free(m->data);
    m->data = NULL;
    hlc_diag(d, HLC_ERROR, "%s: member %s: corrupt deflate data", what, m->name);
    return -1;
  }
  return 0;
}

/* Inflating a deflated member in pieces, straight into where the bytes go;
 * each piece of compressed bytes read just before it is fed (pager). */
typedef struct Inflater {
  z_stream z;
  const unsigned char *src;
  size_t clen, in_done;
  bool ended;
  HlcPager *pager;
} Inflater;

/* Exactly n more bytes into dst; -1 if the stream is corrupt or ends first. */
static int inflate_into(Inflater *f, unsigned char *dst, size_t n) {
  size_t out_done = 0;
  while (out_done < n) {
    if (f->ended) return -1;
    /* zlib counts in uInt: feed large members in pieces. */
    uInt ci = (uInt)(f->clen - f->in_done > (1u << 24) ? (1u << 24) : f->clen - f->in_done);
    uInt co = (uInt)(n - out_done > (1u << 30) ? (1u << 30) : n - out_done);
    const unsigned char *in = f->src + f->in_done;
    hlc_need(f->pager, in, ci);
    f->z.next_in = (Bytef *)(uintptr_t)in;
    f->z.avail_in = ci;
    f->z.next_out = dst + out_done;
    f->z.avail_out = co;
    int r = inflate(&f->z, Z_NO_FLUSH);
    f->in_done += ci - f->z.avail_in;
    out_done += co - f->z.avail_out;
    hlc_done(f->pager, in, (size_t)(f->src + f->in_done - in));
    if (r == Z_STREAM_END) f->ended = true;
    else if (r != Z_OK && r != Z_BUF_ERROR) return -1;
    else if (f->z.avail_in == ci && f->z.avail_out == co) return -1;   /* no progress */
  }
  return 0;
}

int hli_npz_member_npy(const HliNpzMember *m, const HloShape *want, const char *what, HlcDiags *d,
                       HliValue **out) {
  *out = NULL;
  HlcPager *pg = m->borrowed ? m->pager : NULL;   /* a stored member: the archive's bytes */
  if (m->data) {
    hlc_need(pg, m->data, m->len < 6 ? m->len : 6);
    return m->len >= 6 && memcmp(m->data, "\x93NUMPY", 6) == 0
               ? hli_npy_read_paged(m->data, m->len, want, what, d, pg, out)
               : -2;
  }
  /* Deflated: the header from the first bytes, then the elements inflated
   * straight into the value's buffer (Fortran order through a copy). */
  Inflater f;
  memset(&f, 0, sizeof f);
  f.src = m->src;
  f.clen = m->csize;
  f.pager = m->pager;
  if (inflateInit2(&f.z, -MAX_WBITS) != Z_OK) { hlc_diag(d, HLC_ERROR, "%s: out of memory", what); return -1; }
  int rc = -1;
  HliValue *v = NULL;
  unsigned char *tmp = NULL;
  size_t pre = m->len < 12 ? m->len : 12;
  unsigned char head[12];
  HliNpyInfo info;
  bool swap;
  if (inflate_into(&f, head, pre) != 0) goto corrupt;
  if (pre < 6 || memcmp(head, "\x93NUMPY", 6) != 0) { rc = -2; goto done; }
  size_t hoff = head[6] == 1 ? 10 : 12, hlen = pre < 10 ? 0 : (size_t)head[8] | (size_t)head[9] << 8;
  if (head[6] != 1 && pre == 12) hlen |= (size_t)head[10] << 16 | (size_t)head[11] << 24;
  /* The header is read whole only if the member holds it (a corrupt length
   * is not an allocation size). */
  size_t hsize = hoff + hlen > m->len ? m->len : hoff + hlen;
  tmp = malloc(hsize > pre ? hsize : pre);
  if (!tmp) { hlc_diag(d, HLC_ERROR, "%s: out of memory", what); goto done; }
  memcpy(tmp, head, pre);
  if (hsize > pre && inflate_into(&f, tmp + pre, hsize - pre) != 0) goto corrupt;
  if (hli_npy_info(tmp, hsize, what, d, &info) != 0) goto done;
  if ((rc = npy_check(&info, m->len - info.data_off, want, what, d, &swap)) != 0) goto done;
  rc = -1;
  free(tmp);
  tmp = NULL;
  if (!(v = hli_value_new(NULL, want))) { hlc_diag(d, HLC_ERROR, "%s: out of memory", what); goto done; }
  if (info.fortran && v->rank > 1) {
    if (!(tmp = malloc(v->nbytes ? v->nbytes : 1))) { hlc_diag(d, HLC_ERROR, "%s: out of memory", what); goto done; }
    if (inflate_into(&f, tmp, v->nbytes) != 0) goto corrupt;
    from_fortran(v, tmp);
  } else if (inflate_into(&f, v->data, v->nbytes) != 0) {
    goto corrupt;
  }
  if ((rc = npy_finish(v, swap, what, d)) != 0) goto done;
  *out = v;
  v = NULL;
  rc = 0;
  goto done;
corrupt:
  hlc_diag(d, HLC_ERROR, "%s: member %s: corrupt deflate data", what, m->name);
done:
  inflateEnd(&f.z);
  free(tmp);
  if (v) hli_value_unref(NULL, v);
  return rc;
}

const HliNpzMember *hli_npz_find(const HliNpzMember *m, int32_t n, const char *name) {
  size_t nl = strlen(name);
  for (int32_t i = 0; i < n; i++) {
    const char *s = m[i].name;
    if (strcmp(s, name) == 0) return &m[i];
    if (strncmp(s, name, nl) == 0 && strcmp(s + nl, ".npy") == 0) return &m[i];
  }
  return NULL;
}

int hli_npz_write(HliValue *const *leaves, int32_t n, HlcText *b, HlcDiags *d) {
  return hli_npz_write_named(leaves, NULL, n, b, d);
}

int hli_npz_write_named(HliValue *const *leaves, const char *const *names, int32_t n, HlcText *b,
                        HlcDiags *d) {
  typedef struct { char name[32]; uint32_t crc; uint64_t size, off; } Ent;
  Ent *ents = calloc((size_t)(n ? n : 1), sizeof *ents);
  if (!ents) { hlc_diag(d, HLC_ERROR, "out of memory"); return -1; }
  int rc = 0;
  for (int32_t i = 0; i < n && rc == 0; i++) {
    HlcText npy = {0};
    if (hli_npy_write(leaves[i], &npy, d) != 0) { rc = -1; break; }
    Ent *e = &ents[i];
    if (names) snprintf(e->name, sizeof e->name, "%.27s.npy", names[i]);
    else snprintf(e->name, sizeof e->name, "arr_%d.npy", (int)i);
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t o = 0; o < npy.n;) {
      uInt step = (uInt)(npy.n - o > (1u << 30) ? (1u << 30) : npy.n - o);
      crc = crc32(crc, (const Bytef *)npy.p + o, step);
      o += step;
    }
    e->crc = (uint32_t)crc;
    e->size = npy.n;
    e->off = b->n;
    bool big = e->size >= 0xffffffffu || e->off >= 0xffffffffu;
    size_t nl = strlen(e->name);
    wr32(b, 0x04034b50);
    wr16(b, big ? 45 : 20);            /* version needed */
    wr16(b, 0);                        /* flags */
    wr16(b, 0);                        /* stored */
    wr16(b, 0); wr16(b, 0x21);         /* time, date: 1980-01-01 */
    wr32(b, e->crc);
    wr32(b, big ? 0xffffffffu : (uint32_t)e->size);
    wr32(b, big ? 0xffffffffu : (uint32_t)e->size);
    wr16(b, (uint32_t)nl);
    wr16(b, big ? 20 : 0);
    hlc_text_put(b, e->name, nl);
    if (big) { wr16(b, 1); wr16(b, 16); wr64(b, e->size); wr64(b, e->size); }
    hlc_text_put(b, npy.p, npy.n);
    hlc_text_free(&npy);
  }
  if (rc == 0) {
    uint64_t cd = b->n;
    for (int32_t i = 0; i < n; i++) {
      Ent *e = &ents[i];
      bool big = e->size >= 0xffffffffu || e->off >= 0xffffffffu;
      size_t nl = strlen(e->name);
      wr32(b, 0x02014b50);
      wr16(b, big ? 45 : 20);          /* made by */
      wr16(b, big ? 45 : 20);          /* needed */
      wr16(b, 0); wr16(b, 0); wr16(b, 0); wr16(b, 0x21);
      wr32(b, e->crc);
      wr32(b, big ? 0xffffffffu : (uint32_t)e->size);
      wr32(b, big ? 0xffffffffu : (uint32_t)e->size);
      wr16(b, (uint32_t)nl);
      wr16(b, big ? 28 : 0);           /* extra */
      wr16(b, 0); wr16(b, 0); wr16(b, 0); wr32(b, 0);
      wr32(b, big ? 0xffffffffu : (uint32_t)e->off);
      hlc_text_put(b, e->name, nl);
      if (big) { wr16(b, 1); wr16(b, 24); wr64(b, e->size); wr64(b, e->size); wr64(b, e->off); }
    }
    uint64_t cdlen = b->n - cd;
    if (cd >= 0xffffffffu || n >= 0xffff) {
      uint64_t z64 = b->n;
      wr32(b, 0x06064b50); wr64(b, 44); wr16(b, 45); wr16(b, 45); wr32(b, 0); wr32(b, 0);
      wr64(b, (uint64_t)n); wr64(b, (uint64_t)n); wr64(b, cdlen); wr64(b, cd);
      wr32(b, 0x07064b50); wr32(b, 0); wr64(b, z64); wr32(b, 1);
    }
    wr32(b, 0x06054b50);
    wr16(b, 0); wr16(b, 0);
    wr16(b, n >= 0xffff ? 0xffff : (uint32_t)n);
    wr16(b, n >= 0xffff ? 0xffff : (uint32_t)n);
    wr32(b, cdlen >= 0xffffffffu ? 0xffffffffu : (uint32_t)cdlen);
    wr32(b, cd >= 0xffffffffu ? 0xffffffffu : (uint32_t)cd);
    wr16(b, 0);
    if (b->oom) { hlc_diag(d, HLC_ERROR, "out of memory"); rc = -1; }
  }
  free(ents);
  return rc;
}

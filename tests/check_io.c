/* check_io.c: Check suite for values in files and the public API's value
 * handling: .npy headers and data (every element type's descr, v1/v2
 * headers, big-endian and Fortran-order files, mismatch errors), .npz
 * archives (stored and deflated members), HLO literal text (round trips per
 * element type, layouts and comments, errors), golden comparison.
 * Expected bytes and texts are worked out by hand from the .npy format
 * description and XLA's literal syntax. */
#include "hlorun.h"
#include "interp/valio.h"
#include "interp/api.h"
#include <check.h>
#include <fcntl.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "tests/testlib.h"

/* A .npy file with dict text `dict`, padded like numpy (64-byte aligned). */
static size_t make_npy(unsigned char *out, int version, const char *dict, const void *data,
                       size_t n) {
  size_t pre = version == 1 ? 10 : 12;
  size_t dl = strlen(dict);
  size_t hl = ((pre + dl + 1 + 63) / 64) * 64 - pre;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (unsigned char)version;
  out[7] = 0;
  if (version == 1) { out[8] = (unsigned char)hl; out[9] = (unsigned char)(hl >> 8); }
  else { out[8] = (unsigned char)hl; out[9] = (unsigned char)(hl >> 8); out[10] = 0; out[11] = 0; }
  memset(out + pre, ' ', hl);
  memcpy(out + pre, dict, dl);
  out[pre + hl - 1] = '\n';
  memcpy(out + pre + hl, data, n);
  return pre + hl + n;
}

static HloShape arr(HloDtype t, int rank, int64_t *dims) {
  HloShape s = {.dtype = t, .rank = rank, .dims = dims};
  return s;
}

START_TEST(npy_header_bytes) {
  int64_t dims[2] = {2, 3};
  HloShape s = arr(HLO_F32, 2, dims);
  HliValue *v = hli_value_new(NULL, &s);
  for (int i = 0; i < 6; i++) ((float *)v->data)[i] = (float)(i + 1);
  HlcText b = {0};
  HlcDiags d = {0};
  ck_assert_int_eq(hli_npy_write(v, &b, &d), 0);
  /* 10 bytes of preamble + 118 of header = 128, then 6 floats. */
  ck_assert_uint_eq(b.n, 128 + 24);
  ck_assert_int_eq(memcmp(b.p, "\x93NUMPY\x01\x00\x76\x00", 10), 0);
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  ck_assert_int_eq(memcmp(b.p + 10, dict, strlen(dict)), 0);
  ck_assert_int_eq(b.p[10 + strlen(dict)], ' ');
  ck_assert_int_eq(b.p[127], '\n');
  float f5;
  memcpy(&f5, b.p + 128 + 16, 4);
  ck_assert_float_eq(f5, 5.0f);
  hlc_text_free(&b);
  hli_value_unref(NULL, v);

  /* Scalars have shape (), vectors (n,). */
  HloShape sc = arr(HLO_S64, 0, NULL);
  v = hli_value_zeros(NULL, &sc);
  ck_assert_int_eq(hli_npy_write(v, &b, &d), 0);
  ck_assert_ptr_nonnull(strstr(b.p + 10, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }"));
  hlc_text_free(&b);
  hli_value_unref(NULL, v);
  int64_t n3 = 3;
  HloShape ve = arr(HLO_BF16, 1, &n3);
  v = hli_value_zeros(NULL, &ve);
  ck_assert_int_eq(hli_npy_write(v, &b, &d), 0);
  ck_assert_ptr_nonnull(strstr(b.p + 10, "{'descr': '<V2', 'fortran_order': False, 'shape': (3,), }"));
  hlc_text_free(&b);
  hli_value_unref(NULL, v);
}
END_TEST

START_TEST(npy_descr_table) {
  static const struct { HloDtype t; const char *d; } want[] = {
    {HLO_PRED, "|b1"}, {HLO_S8, "|i1"}, {HLO_U8, "|u1"}, {HLO_S16, "<i2"}, {HLO_U16, "<u2"},
    {HLO_S32, "<i4"}, {HLO_U32, "<u4"}, {HLO_S64, "<i8"}, {HLO_U64, "<u8"}, {HLO_F16, "<f2"},
    {HLO_F32, "<f4"}, {HLO_F64, "<f8"}, {HLO_C64, "<c8"}, {HLO_C128, "<c16"},
    {HLO_BF16, "<V2"}, {HLO_F8E5M2, "|V1"}, {HLO_F8E4M3FN, "|V1"}, {HLO_S4, "|i1"},
    {HLO_U4, "|u1"}, {HLO_S2, "|i1"}, {HLO_U2, "|u1"},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    ck_assert_str_eq(hli_npy_descr(want[i].t), want[i].d);
  ck_assert_ptr_null(hli_npy_descr(HLO_TUPLE));
}
END_TEST

START_TEST(npy_read_values_and_mismatches) {
  unsigned char f[512];
  int32_t vals[3] = {1, -2, 3};
  size_t n = make_npy(f, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", vals, 12);
  int64_t d3 = 3;
  HloShape s = arr(HLO_S32, 1, &d3);
  HlcDiags d = {0};
  HliValue *v;
  ck_assert_int_eq(hli_npy_read(f, n, &s, "in0", &d, &v), 0);
  ck_assert_int_eq(((int32_t *)v->data)[1], -2);
  hli_value_unref(NULL, v);

  /* Same bytes read as f32: a dtype mismatch, not a conversion. */
  HloShape sf = arr(HLO_F32, 1, &d3);
  ck_assert_int_eq(hli_npy_read(f, n, &sf, "in0", &d, &v), HLI_READ_MISMATCH);
  ck_assert_str_eq(d.v[0].message,
                   "in0: dtype <i4 (s32) does not match the expected type f32 (stored as <f4)");
  hlc_diags_clear(&d);

  /* Shape mismatch. */
  int64_t d22[2] = {1, 3};
  HloShape s2 = arr(HLO_S32, 2, d22);
  ck_assert_int_eq(hli_npy_read(f, n, &s2, "in0", &d, &v), HLI_READ_MISMATCH);
  ck_assert_str_eq(d.v[0].message, "in0: shape (3,) does not match the expected s32 (1, 3)");
  hlc_diags_clear(&d);

  /* Truncated data. */
  ck_assert_int_eq(hli_npy_read(f, n - 1, &s, "in0", &d, &v), -1);
  ck_assert_ptr_nonnull(strstr(d.v[0].message, "truncated"));
  hlc_diags_clear(&d);

  /* Not a .npy at all. */
  ck_assert_int_eq(hli_npy_read("hello world", 11, &s, "x", &d, &v), -1);
  ck_assert_str_eq(d.v[0].message, "x: not a .npy file (bad magic)");
  hlc_diags_clear(&d);
}
END_TEST

START_TEST(npy_raw_bits_types) {
  unsigned char f[512];
  HlcDiags d = {0};
  HliValue *v;
  int64_t d2 = 2;
  /* bf16 1.0 = 0x3f80, -2.0 = 0xc000: bits are kept as they are. */
  uint16_t bf[2] = {0x3f80, 0xc000};
  size_t n = make_npy(f, 1, "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }", bf, 4);
  HloShape s = arr(HLO_BF16, 1, &d2);
  ck_assert_int_eq(hli_npy_read(f, n, &s, "b", &d, &v), 0);
  ck_assert_uint_eq(((uint16_t *)v->data)[1], 0xc000);
  hli_value_unref(NULL, v);
  /* A bf16 parameter does not take f16 data. */
  n = make_npy(f, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", bf, 4);
  ck_assert_int_eq(hli_npy_read(f, n, &s, "b", &d, &v), HLI_READ_MISMATCH);
  hlc_diags_clear(&d);
  /* f8e4m3fn as |V1. */
  uint8_t f8[2] = {0x38, 0xb8};
  n = make_npy(f, 1, "{'descr': '|V1', 'fortran_order': False, 'shape': (2,), }", f8, 2);
  HloShape s8 = arr(HLO_F8E4M3FN, 1, &d2);
  ck_assert_int_eq(hli_npy_read(f, n, &s8, "b", &d, &v), 0);
  ck_assert_uint_eq(((uint8_t *)v->data)[1], 0xb8);
  hli_value_unref(NULL, v);
  /* s4 one per byte: -8 and 7 fit, 9 does not. */
  int8_t s4ok[2] = {-8, 7}, s4bad[2] = {1, 9};
  HloShape s4 = arr(HLO_S4, 1, &d2);
  n = make_npy(f, 1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", s4ok, 2);
  ck_assert_int_eq(hli_npy_read(f, n, &s4, "q", &d, &v), 0);
  ck_assert_int_eq(((int8_t *)v->data)[0], -8);
  hli_value_unref(NULL, v);
  n = make_npy(f, 1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", s4bad, 2);
  ck_assert_int_eq(hli_npy_read(f, n, &s4, "q", &d, &v), HLI_READ_MISMATCH);
  ck_assert_str_eq(d.v[0].message, "q: element 1 is 9, out of range for s4");
  hlc_diags_clear(&d);
  /* pred. */
  uint8_t pb[2] = {1, 0};
  HloShape sp = arr(HLO_PRED, 1, &d2);
  n = make_npy(f, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", pb, 2);
  ck_assert_int_eq(hli_npy_read(f, n, &sp, "p", &d, &v), 0);
  ck_assert_uint_eq(((uint8_t *)v->data)[0], 1);
  hli_value_unref(NULL, v);
  /* complex64 (1+2i). */
  float c[2] = {1, 2};
  int64_t d1 = 1;
  HloShape sc = arr(HLO_C64, 1, &d1);
  n = make_npy(f, 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", c, 8);
  ck_assert_int_eq(hli_npy_read(f, n, &sc, "c", &d, &v), 0);
  ck_assert_float_eq(((float *)v->data)[1], 2.0f);
  hli_value_unref(NULL, v);
}
END_TEST

START_TEST(npy_big_endian_fortran_v2) {
  unsigned char f[512];
  HlcDiags d = {0};
  HliValue *v;
  /* >i4 258 = 00 00 01 02. */
  unsigned char be[4] = {0, 0, 1, 2};
  int64_t d1 = 1;
  HloShape s = arr(HLO_S32, 1, &d1);
  size_t n = make_npy(f, 1, "{'descr': '>i4', 'fortran_order': False, 'shape': (1,), }", be, 4);
  ck_assert_int_eq(hli_npy_read(f, n, &s, "b", &d, &v), 0);
  ck_assert_int_eq(((int32_t *)v->data)[0], 258);
  hli_value_unref(NULL, v);
  /* Fortran order (2,3): memory holds columns [1,4],[2,5],[3,6]. */
  int16_t col[6] = {1, 4, 2, 5, 3, 6};
  int64_t d23[2] = {2, 3};
  HloShape s2 = arr(HLO_S16, 2, d23);
  n = make_npy(f, 1, "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }", col, 12);
  ck_assert_int_eq(hli_npy_read(f, n, &s2, "f", &d, &v), 0);
  for (int i = 0; i < 6; i++) ck_assert_int_eq(((int16_t *)v->data)[i], i + 1);
  hli_value_unref(NULL, v);
  /* Version 2 header (4-byte length). */
  double x = 0.25;
  HloShape s0 = arr(HLO_F64, 0, NULL);
  n = make_npy(f, 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &x, 8);
  ck_assert_int_eq(hli_npy_read(f, n, &s0, "v2", &d, &v), 0);
  ck_assert_double_eq(((double *)v->data)[0], 0.25);
  hli_value_unref(NULL, v);
  ck_assert_int_eq(d.nerrors, 0);
}
END_TEST

START_TEST(npz_round_trip) {
  int64_t d2 = 2;
  HloShape sa = arr(HLO_F32, 1, &d2), sb = arr(HLO_S8, 0, NULL);
  HliValue *a = hli_value_new(NULL, &sa), *b = hli_value_new(NULL, &sb);
  ((float *)a->data)[0] = 1.5f;
  ((float *)a->data)[1] = -3;
  ((int8_t *)b->data)[0] = -7;
  HliValue *leaves[2] = {a, b};
  HlcText z = {0};
  HlcDiags d = {0};
  ck_assert_int_eq(hli_npz_write(leaves, 2, &z, &d), 0);
  ck_assert_int_eq(memcmp(z.p, "PK\x03\x04", 4), 0);
  HliNpzMember *m;
  int32_t n;
  ck_assert_int_eq(hli_npz_read(z.p, z.n, "z", &d, &m, &n), 0);
  ck_assert_int_eq(n, 2);
  ck_assert_str_eq(m[0].name, "arr_0.npy");
  ck_assert_str_eq(m[1].name, "arr_1.npy");
  ck_assert_ptr_eq(hli_npz_find(m, n, "arr_1"), &m[1]);
  ck_assert_ptr_null(hli_npz_find(m, n, "arr_2"));
  HliValue *r;
  ck_assert_int_eq(hli_npy_read(m[0].data, m[0].len, &sa, "a", &d, &r), 0);
  ck_assert_float_eq(((float *)r->data)[1], -3.0f);
  hli_value_unref(NULL, r);
  ck_assert_int_eq(hli_npy_read(m[1].data, m[1].len, &sb, "b", &d, &r), 0);
  ck_assert_int_eq(((int8_t *)r->data)[0], -7);
  hli_value_unref(NULL, r);
  hli_npz_members_free(m, n);
  /* Listed lazily, stored members are the archive's own bytes. */
  ck_assert_int_eq(hli_npz_open(z.p, z.n, "z", &d, &m, &n), 0);
  ck_assert_int_eq(n, 2);
  ck_assert(m[0].borrowed && (char *)m[0].data > z.p && (char *)m[0].data < z.p + z.n);
  ck_assert_int_eq(hli_npz_member_npy(&m[0], &sa, "a", &d, &r), 0);
  ck_assert_float_eq(((float *)r->data)[1], -3.0f);
  hli_value_unref(NULL, r);
  hli_npz_members_free(m, n);
  hlc_text_free(&z);
  hli_value_unref(NULL, a);
  hli_value_unref(NULL, b);
}
END_TEST

static void put16(unsigned char *p, unsigned v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static void put32(unsigned char *p, unsigned v) { put16(p, v & 0xffff); put16(p + 2, v >> 16); }

START_TEST(npz_deflated_member) {
  /* A zip with one deflated member "arr_0.npy", built by hand. */
  unsigned char npy[256];
  int32_t vals[4] = {5, 6, 7, 8};
  size_t nl = make_npy(npy, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", vals, 16);
  unsigned char comp[512];
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  ck_assert_int_eq(deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  zs.next_in = npy;
  zs.avail_in = (uInt)nl;
  zs.next_out = comp;
  zs.avail_out = sizeof comp;
  ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
  size_t cl = sizeof comp - zs.avail_out;
  deflateEnd(&zs);
  unsigned crc = (unsigned)crc32(0, npy, (uInt)nl);
  unsigned char zip[1024] = {0};
  size_t o = 0;
  const char *name = "arr_0.npy";
  put32(zip + o, 0x04034b50); put16(zip + o + 4, 20); put16(zip + o + 8, 8);
  put32(zip + o + 14, crc); put32(zip + o + 18, (unsigned)cl); put32(zip + o + 22, (unsigned)nl);
  put16(zip + o + 26, 9);
  memcpy(zip + o + 30, name, 9);
  memcpy(zip + o + 39, comp, cl);
  size_t cd = o + 39 + cl;
  o = cd;
  put32(zip + o, 0x02014b50); put16(zip + o + 4, 20); put16(zip + o + 6, 20); put16(zip + o + 10, 8);
  put32(zip + o + 16, crc); put32(zip + o + 20, (unsigned)cl); put32(zip + o + 24, (unsigned)nl);
  put16(zip + o + 28, 9); put32(zip + o + 42, 0);
  memcpy(zip + o + 46, name, 9);
  o += 55;
  put32(zip + o, 0x06054b50); put16(zip + o + 8, 1); put16(zip + o + 10, 1);
  put32(zip + o + 12, (unsigned)(o - cd)); put32(zip + o + 16, (unsigned)cd);
  o += 22;
  HliNpzMember *m;
  int32_t n;
  HlcDiags d = {0};
  ck_assert_int_eq(hli_npz_read(zip, o, "z", &d, &m, &n), 0);
  ck_assert_int_eq(n, 1);
  ck_assert_uint_eq(m[0].len, nl);
  ck_assert_int_eq(memcmp(m[0].data, npy, nl), 0);
  hli_npz_members_free(m, n);
  /* Listed lazily, the member is inflated straight into a value: the same
   * four elements; wanted as another shape, the header says no. */
  int64_t dims4[1] = {4}, dims5[1] = {5};
  HloShape s4 = {.dtype = HLO_S32, .rank = 1, .dims = dims4};
  HloShape s5 = {.dtype = HLO_S32, .rank = 1, .dims = dims5};
  ck_assert_int_eq(hli_npz_open(zip, o, "z", &d, &m, &n), 0);
  ck_assert_ptr_null(m[0].data);
  HliValue *r;
  ck_assert_int_eq(hli_npz_member_npy(&m[0], &s4, "z", &d, &r), 0);
  ck_assert_int_eq(memcmp(r->data, vals, 16), 0);
  hli_value_unref(NULL, r);
  ck_assert_int_eq(hli_npz_member_npy(&m[0], &s5, "z", &d, &r), HLI_READ_MISMATCH);
  ck_assert_str_eq(d.v[0].message, "z: shape (4,) does not match the expected s32 (5,)");
  hlc_diags_clear(&d);
  ck_assert_int_eq(hli_npz_member_bytes(&m[0], "z", &d), 0);
  ck_assert_int_eq(memcmp(m[0].data, npy, nl), 0);
  hli_npz_members_free(m, n);
  /* Corrupt the compressed stream: a clear error, either way. */
  memset(zip + 39, 0xff, cl);
  ck_assert_int_eq(hli_npz_read(zip, o, "z", &d, &m, &n), -1);
  ck_assert_str_eq(d.v[0].message, "z: member arr_0.npy: corrupt deflate data");
  hlc_diags_clear(&d);
  ck_assert_int_eq(hli_npz_open(zip, o, "z", &d, &m, &n), 0);
  ck_assert_int_eq(hli_npz_member_npy(&m[0], &s4, "z", &d, &r), -1);
  ck_assert_str_eq(d.v[0].message, "z: member arr_0.npy: corrupt deflate data");
  hli_npz_members_free(m, n);
  hlc_diags_clear(&d);
}
END_TEST

/* A file truncated (by another process) while it is read: hli_file_open
 * reads a large file's payload on demand, so the read past its new end
 * comes back short; those bytes stay zeros, nothing faults, and
 * hli_file_done reports the truncation, naming the file. Deterministic: the
 * truncation comes between the opening and the read of the elements. */
START_TEST(file_truncated_while_read) {
  char path[] = "/tmp/hlorun-check-io-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  enum { N = 1 << 19 };   /* 2 MiB of f32: large enough to be read on demand */
  float *vals = malloc(N * sizeof(float));
  unsigned char *npy = malloc(N * sizeof(float) + 256);
  ck_assert(vals && npy);
  for (int i = 0; i < N; i++) vals[i] = (float)i + 1;
  size_t len = make_npy(npy, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (524288,), }", vals,
                        N * sizeof(float));
  ck_assert_int_eq(write(fd, npy, len), (ssize_t)len);
  close(fd);
  HloCtx *ctx;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  HliFile f;
  ck_assert_int_eq(hli_file_open(ctx, path, &f), HLO_OK);
  ck_assert_uint_eq(f.maplen, len);
  ck_assert_ptr_nonnull(hli_file_pager(&f));
  ck_assert(!hli_file_truncated(&f));
  ck_assert_int_eq(truncate(path, 8192), 0);   /* the header (128 bytes) and 2016 elements stay */
  int64_t dims[1] = {N};
  HloShape s = {.dtype = HLO_F32, .rank = 1, .dims = dims};
  HlcDiags d = {0};
  HliValue *v;
  ck_assert_int_eq(hli_npy_read_paged(f.data, f.len, &s, "t", &d, hli_file_pager(&f), &v), 0);
  ck_assert(hli_file_truncated(&f));
  ck_assert_float_eq(((float *)v->data)[2015], 2016.0f);   /* before the new end: read */
  ck_assert_float_eq(((float *)v->data)[2016], 0.0f);      /* past it: zeros, no signal */
  ck_assert_float_eq(((float *)v->data)[N - 1], 0.0f);
  hli_value_unref(NULL, v);
  ck_assert_int_eq(hli_file_done(ctx, &f, path, HLO_OK), HLO_IO_ERROR);
  char want[128];
  snprintf(want, sizeof want, "%s: the file was truncated while it was being read", path);
  ck_assert_msg(strstr(hlo_ctx_diagnostics(ctx), want), "%s", hlo_ctx_diagnostics(ctx));
  /* Untouched files report nothing. */
  ck_assert_int_eq(hli_file_open(ctx, path, &f), HLO_OK);
  ck_assert(!hli_file_truncated(&f));
  ck_assert_int_eq(hli_file_done(ctx, &f, path, HLO_OK), HLO_OK);
  hlc_diags_clear(&d);
  hlo_ctx_free(ctx);
  unlink(path);
  free(vals);
  free(npy);
}
END_TEST

/* Read text (shape from the text), write it back: the same text. */
static void round_trip(const char *text) {
  HlcArena a;
  hlc_arena_init(&a);
  HlcDiags d = {0};
  HliValue *v = NULL;
  int rc = hli_literal_read(text, strlen(text), NULL, &a, "lit", &d, &v);
  ck_assert_msg(rc == 0, "%s: %s", text, d.n ? d.v[0].message : "?");
  HlcText b = {0};
  ck_assert_int_eq(hli_literal_write(v, &b), 0);
  ck_assert_str_eq(b.p, text);
  hlc_text_free(&b);
  hli_value_unref(NULL, v);
  hlc_arena_free(&a);
}

START_TEST(empty_array_literal_size_is_bounded) {
  /* f32[2,0] prints one {} per row; f32[3000000,3000000,0] would print
   * 9e12 of them (found by fuzz_values through a .npy header): refused. */
  round_trip("f32[2,0] {{}, {}}");
  int64_t dims[3] = {3000000, 3000000, 0};
  HloShape s = {.dtype = HLO_F32, .rank = 3, .dims = dims};
  HliValue *v = hli_value_new(NULL, &s);
  ck_assert_ptr_nonnull(v);
  ck_assert(hli_literal_too_large(v));
  HlcText b = {0};
  ck_assert_int_eq(hli_literal_write(v, &b), -1);
  ck_assert_uint_eq(b.n, 0);
  hlc_text_free(&b);
  hli_value_unref(NULL, v);
  /* The element count saturates instead of overflowing, and a zero dim
   * anywhere makes it 0 (fuzz_values: a literal shape whose leading dims
   * overflow before its zero dim). */
  int64_t big[3] = {(int64_t)1 << 62, 4, 0};
  HloShape bs = {.dtype = HLO_F32, .rank = 3, .dims = big};
  ck_assert_int_eq(hlp_shape_elements(&bs), 0);
  bs.rank = 2;
  ck_assert_int_eq(hlp_shape_elements(&bs), INT64_MAX);
  HlcDiags d = {0};
  HliValue *w = NULL;
  static const char text[] = "f32[611111,52221111111111111,3,0] {}";
  HlcArena a;
  hlc_arena_init(&a);
  ck_assert_int_eq(hli_literal_read(text, strlen(text), NULL, &a, "lit", &d, &w), -1);
  ck_assert_int_ge(d.n, 1);
  ck_assert_msg(strstr(d.v[0].message, "expected '{'") != NULL, "%s", d.v[0].message);
  hlc_diags_clear(&d);
  hlc_arena_free(&a);
  dims[0] = 1024, dims[1] = 1024;   /* exactly a million: still printed */
  v = hli_value_new(NULL, &s);
  ck_assert(!hli_literal_too_large(v));
  ck_assert_int_eq(hli_literal_write(v, &b), 0);
  ck_assert_uint_eq(b.n, strlen("f32[1024,1024,0] ") + 2 + 1023 * 2 + 1024 * (2 + 1023 * 2 + 1024 * 2));
  hlc_text_free(&b);
  hli_value_unref(NULL, v);
}
END_TEST

START_TEST(literal_round_trips) {
  round_trip("f32[2,2] {{1, 2}, {3, 4}}");
  round_trip("f32[] 1.5");
  round_trip("f64[] 0.1");
  round_trip("pred[3] {true, false, true}");
  round_trip("s8[2] {-128, 127}");
  round_trip("u8[1] {255}");
  round_trip("s16[1] {-32768}");
  round_trip("u32[1] {4294967295}");
  round_trip("u64[1] {18446744073709551615}");
  round_trip("s64[1] {-9223372036854775808}");
  round_trip("bf16[2] {1.5, -2}");
  round_trip("f16[2] {0.5, 65504}");
  round_trip("c64[2] {(1, 2), (-0.5, 0)}");
  round_trip("c128[] (0.25, -1)");
  round_trip("(f32[] 1, s32[2] {1, 2})");
  round_trip("((f32[] 1), (), token[])");
  round_trip("s32[2,0] {{}, {}}");
  round_trip("s32[0] {}");
  round_trip("f32[3] {nan, inf, -inf}");
  round_trip("s4[2] {-8, 7}");
  round_trip("u4[1] {15}");
  round_trip("u2[2] {0, 3}");
  round_trip("f8e4m3fn[2] {448, -0.5}");
  round_trip("f8e5m2[1] {-0.25}");
}
END_TEST

START_TEST(literal_layouts_comments_and_want) {
  const char *t = "f32[2,2]{1,0} {{1, 2}, /*index=1*/ {3, 4}}";
  int64_t d22[2] = {2, 2};
  HloShape want = arr(HLO_F32, 2, d22);
  HlcDiags d = {0};
  HliValue *v;
  ck_assert_int_eq(hli_literal_read(t, strlen(t), &want, NULL, "lit", &d, &v), 0);
  ck_assert_ptr_eq(v->shape, &want);
  ck_assert_float_eq(((float *)v->data)[3], 4.0f);
  hli_value_unref(NULL, v);
  /* Wrong shape for the parameter. */
  const char *t2 = "f32[4] {1, 2, 3, 4}";
  ck_assert_int_eq(hli_literal_read(t2, strlen(t2), &want, NULL, "in0.txt", &d, &v), HLI_READ_MISMATCH);
  ck_assert_str_eq(d.v[0].message,
                   "in0.txt:1:1: literal of shape f32[4] does not match the expected f32[2,2]");
  hlc_diags_clear(&d);
  /* Too few elements in a row. */
  const char *t3 = "f32[2,2] {{1, 2}, {3}}";
  ck_assert_int_eq(hli_literal_read(t3, strlen(t3), &want, NULL, "x", &d, &v), -1);
  ck_assert_str_eq(d.v[0].message, "x:1:21: expected ','");
  hlc_diags_clear(&d);
  /* Out of range integer. */
  int64_t d1 = 1;
  HloShape s8 = arr(HLO_S8, 1, &d1);
  const char *t4 = "s8[1] {200}";
  ck_assert_int_eq(hli_literal_read(t4, strlen(t4), &s8, NULL, "x", &d, &v), -1);
  ck_assert_str_eq(d.v[0].message, "x:1:8: '200' is not a s8 value");
  hlc_diags_clear(&d);
  /* Trailing garbage. */
  const char *t5 = "s8[1] {2} x";
  ck_assert_int_eq(hli_literal_read(t5, strlen(t5), &s8, NULL, "x", &d, &v), -1);
  ck_assert_str_eq(d.v[0].message, "x:1:11: unexpected text after the literal");
  hlc_diags_clear(&d);
}
END_TEST

START_TEST(api_buffers_and_compare) {
  HloCtx *ctx;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  int64_t d3 = 3;
  float g[3] = {1, 2, NAN}, w[3] = {1, 2.5f, NAN};
  HloBuffer *bg, *bw, *bs, *bt;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, &d3, 1, g, &bg), HLO_OK);
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, &d3, 1, w, &bw), HLO_OK);
  int64_t bad;
  char *rep;
  ck_assert_int_eq(hlo_buffer_compare(ctx, bg, bw, NULL, &bad, &rep), HLO_OK);
  ck_assert_int_eq(bad, 1);
  /* |2 - 2.5| = 0.5 > 1e-4 + 1e-4 * 2.5; relative 0.5 / 2.5 = 0.2; NaN matches NaN. */
  ck_assert_str_eq(rep, "mismatch: 1 of 3 elements differ (33.3%; f32[3]; rtol=0.0001 atol=0.0001)\n"
                        "  largest absolute error 0.5 at [1]; largest relative error 0.2 at [1]\n"
                        "  at [1]  got 2  want 2.5  abs err 0.5  rel err 0.2\n");
  hlo_free(rep);
  HloCompareOptions co = {sizeof co, 0, 0.5, 0, 0};
  ck_assert_int_eq(hlo_buffer_compare(ctx, bg, bw, &co, &bad, &rep), HLO_OK);
  ck_assert_int_eq(bad, 0);
  ck_assert_ptr_null(rep);

  int32_t three = 3;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_S32, NULL, 0, &three, &bs), HLO_OK);
  HloBuffer *el[2] = {bg, bs};
  ck_assert_int_eq(hlo_buffer_new_tuple(ctx, el, 2, &bt), HLO_OK);
  ck_assert_int_eq(hlo_buffer_tuple_size(bt), 2);
  char *txt;
  size_t len;
  ck_assert_int_eq(hlo_buffer_encode(ctx, bt, "txt", &txt, &len), HLO_OK);
  ck_assert_str_eq(txt, "(f32[3] {1, 2, nan}, s32[] 3)\n");
  hlo_free(txt);
  ck_assert_int_eq(hlo_buffer_encode(ctx, bt, "npy", &txt, &len), HLO_INVALID_ARGUMENT);
  ck_assert_int_eq(hlo_buffer_encode(ctx, bt, "npz", &txt, &len), HLO_OK);
  ck_assert_int_eq(memcmp(txt, "PK\x03\x04", 4), 0);
  hlo_free(txt);
  /* Tuple vs array: a shape mismatch. */
  ck_assert_int_eq(hlo_buffer_compare(ctx, bt, bw, NULL, &bad, &rep), HLO_OK);
  ck_assert_int_eq(bad, -1);
  ck_assert_str_eq(rep, "mismatch: the result has shape (f32[3], s32[]), the expected value f32[3]\n");
  hlo_free(rep);
  double rt, at;
  hlo_default_tolerance(HLO_TYPE_BF16, &rt, &at);
  ck_assert_double_eq(rt, 5e-2);
  hlo_default_tolerance(HLO_TYPE_S32, &rt, &at);
  ck_assert_double_eq(at, 0);
  hlo_buffer_free(bt);
  hlo_buffer_free(bs);
  hlo_buffer_free(bg);
  hlo_buffer_free(bw);
  hlo_ctx_free(ctx);
}
END_TEST

static Suite *io_suite(void) {
  Suite *s = suite_create("io");
  TCase *t = tcase_create("npy");
  tcase_add_test(t, npy_header_bytes);
  tcase_add_test(t, npy_descr_table);
  tcase_add_test(t, npy_read_values_and_mismatches);
  tcase_add_test(t, npy_raw_bits_types);
  tcase_add_test(t, npy_big_endian_fortran_v2);
  suite_add_tcase(s, t);
  t = tcase_create("npz");
  tcase_add_test(t, npz_round_trip);
  tcase_add_test(t, npz_deflated_member);
  tcase_add_test(t, file_truncated_while_read);
  suite_add_tcase(s, t);
  t = tcase_create("literal");
  tcase_add_test(t, literal_round_trips);
  tcase_add_test(t, empty_array_literal_size_is_bounded);
  tcase_add_test(t, literal_layouts_comments_and_want);
  suite_add_tcase(s, t);
  t = tcase_create("api");
  tcase_add_test(t, api_buffers_and_compare);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tl_main(io_suite()); }

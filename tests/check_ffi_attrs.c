/* check_ffi_attrs.c: backend_config -> attributes: every scalar type, both
 * escape layers, arrays, dense tensors, nested dictionaries, sorting, and
 * errors with their exact offsets. Expected values are worked out by hand
 * (bit patterns from the IEEE formats). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ffi/internal.h"
#include "tests/testlib.h"

static HlcArena arena;
static void setup(void) { hlc_arena_init(&arena); }
static void teardown(void) { hlc_arena_free(&arena); }

static HlfAttr parse_ok(const char *text) {
  HlfAttr root;
  size_t off;
  char *err = NULL;
  int rc = hlf_attrs_parse(&arena, text, strlen(text), &root, &off, &err);
  if (rc) ck_abort_msg("parse of %s failed at %zu: %s", text, off, err);
  return root;
}

/* Parse must fail at offset `at` with a message containing `msg`. */
static void parse_err(const char *text, size_t at, const char *msg) {
  HlfAttr root;
  size_t off = 999;
  char *err = NULL;
  int rc = hlf_attrs_parse(&arena, text, strlen(text), &root, &off, &err);
  ck_assert_msg(rc == -1, "%s parsed", text);
  ck_assert_msg(strstr(err, msg), "%s: message '%s' lacks '%s'", text, err, msg);
  ck_assert_msg(off == at, "%s: error at %zu, want %zu (%s)", text, off, at, err);
  free(err);
}

static const HlfAttr *get(const HlfAttr *d, const char *name) {
  for (size_t i = 0; i < d->count; i++)
    if (d->items[i].name_len == strlen(name) && !memcmp(d->items[i].name, name, strlen(name)))
      return &d->items[i];
  ck_abort_msg("no attribute %s", name);
  return NULL;
}

START_TEST(test_empty) {
  ck_assert_uint_eq(parse_ok("").count, 0);
  ck_assert_uint_eq(parse_ok("{}").count, 0);
  ck_assert_uint_eq(parse_ok("  { }  ").count, 0);
}
END_TEST

START_TEST(test_scalars) {
  HlfAttr d = parse_ok("{a = 1 : i8, b = -2 : i16, c = 3 : i32, d = 4, e = 255 : ui8,"
                       " f = 65535 : ui16, g = 7 : ui32, h = 18446744073709551615 : ui64,"
                       " i = 1.5 : f32, j = 2.5, k = true, l = false, m = 1.0 : f16,"
                       " n = 1.0 : bf16, o = 1 : i1, p = -1 : si32, q = 0x3FC00000 : f32,"
                       " r = -9223372036854775808 : i64, s = 255 : i8, t = 0x10,"
                       " u = -2.500000e+00 : f64, v = 1.0E-3, w = true : i1}");
  struct { const char *n; int dt; } want[] = {
    {"a", XLA_FFI_DataType_S8}, {"b", XLA_FFI_DataType_S16}, {"c", XLA_FFI_DataType_S32},
    {"d", XLA_FFI_DataType_S64}, {"e", XLA_FFI_DataType_U8}, {"f", XLA_FFI_DataType_U16},
    {"g", XLA_FFI_DataType_U32}, {"h", XLA_FFI_DataType_U64}, {"i", XLA_FFI_DataType_F32},
    {"j", XLA_FFI_DataType_F64}, {"k", XLA_FFI_DataType_PRED}, {"l", XLA_FFI_DataType_PRED},
    {"m", XLA_FFI_DataType_F16}, {"n", XLA_FFI_DataType_BF16}, {"o", XLA_FFI_DataType_PRED},
    {"p", XLA_FFI_DataType_S32}, {"q", XLA_FFI_DataType_F32}, {"r", XLA_FFI_DataType_S64},
    {"s", XLA_FFI_DataType_S8}, {"t", XLA_FFI_DataType_S64}, {"u", XLA_FFI_DataType_F64},
    {"v", XLA_FFI_DataType_F64}, {"w", XLA_FFI_DataType_PRED}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const HlfAttr *a = get(&d, want[i].n);
    ck_assert_int_eq(a->type, XLA_FFI_AttrType_SCALAR);
    ck_assert_msg(a->dtype == (XLA_FFI_DataType)want[i].dt, "%s", want[i].n);
  }
  ck_assert_int_eq(*(int8_t *)get(&d, "a")->data, 1);
  ck_assert_int_eq(*(int16_t *)get(&d, "b")->data, -2);
  ck_assert_int_eq(*(int64_t *)get(&d, "d")->data, 4);
  ck_assert_uint_eq(*(uint8_t *)get(&d, "e")->data, 255);
  ck_assert_uint_eq(*(uint64_t *)get(&d, "h")->data, UINT64_MAX);
  ck_assert(*(float *)get(&d, "i")->data == 1.5f);
  ck_assert(*(double *)get(&d, "j")->data == 2.5);
  ck_assert_uint_eq(*(uint8_t *)get(&d, "k")->data, 1);
  ck_assert_uint_eq(*(uint8_t *)get(&d, "l")->data, 0);
  ck_assert_uint_eq(*(uint16_t *)get(&d, "m")->data, 0x3C00);   /* f16 1.0 */
  ck_assert_uint_eq(*(uint16_t *)get(&d, "n")->data, 0x3F80);   /* bf16 1.0 */
  ck_assert_uint_eq(*(uint8_t *)get(&d, "o")->data, 1);
  ck_assert_int_eq(*(int32_t *)get(&d, "p")->data, -1);
  ck_assert(*(float *)get(&d, "q")->data == 1.5f);               /* bits 0x3FC00000 */
  ck_assert(*(int64_t *)get(&d, "r")->data == INT64_MIN);
  ck_assert_int_eq(*(int8_t *)get(&d, "s")->data, -1);          /* signless: 255 wraps */
  ck_assert_int_eq(*(int64_t *)get(&d, "t")->data, 16);
  ck_assert(*(double *)get(&d, "u")->data == -2.5);
  ck_assert(*(double *)get(&d, "v")->data == 0.001);
}
END_TEST

START_TEST(test_narrow_floats) {
  HlfAttr d = parse_ok("{a = 65504.0 : f16, b = 6.0e-8 : f16, c = 1.00048828125 : f16,"
                       " d = -2.0 : bf16, e = 1.00390625 : bf16, f = 0x7C00 : f16}");
  ck_assert_uint_eq(*(uint16_t *)get(&d, "a")->data, 0x7BFF);   /* largest finite f16 */
  ck_assert_uint_eq(*(uint16_t *)get(&d, "b")->data, 0x0001);   /* smallest subnormal */
  ck_assert_uint_eq(*(uint16_t *)get(&d, "c")->data, 0x3C00);   /* tie to even */
  ck_assert_uint_eq(*(uint16_t *)get(&d, "d")->data, 0xC000);
  ck_assert_uint_eq(*(uint16_t *)get(&d, "e")->data, 0x3F80);   /* tie to even */
  ck_assert_uint_eq(*(uint16_t *)get(&d, "f")->data, 0x7C00);   /* +inf by bits */
  parse_err("{a = 65536.0 : f16}", 5, "out of range for f16");
  parse_err("{a = 1.0e39 : f32}", 5, "out of range for f32");
}
END_TEST

START_TEST(test_strings) {
  /* The MLIR escapes: \" \\ \n \t and two hex digits. */
  HlfAttr d = parse_ok("{s = \"say \\22hi\\22\\0A\", t = \"a\\\\b\\\"c\\n\\t\", u = \"\\5c\\41\","
                       " e = \"\", \"quoted name\" = \"x\"}");
  const HlfAttr *s = get(&d, "s");
  ck_assert_int_eq(s->type, XLA_FFI_AttrType_STRING);
  ck_assert_uint_eq(s->count, 9);
  ck_assert(memcmp(s->str, "say \"hi\"\n", 9) == 0);
  ck_assert_uint_eq(get(&d, "t")->count, 7);
  ck_assert(memcmp(get(&d, "t")->str, "a\\b\"c\n\t", 7) == 0);
  ck_assert(memcmp(get(&d, "u")->str, "\\A", 2) == 0);
  ck_assert_uint_eq(get(&d, "e")->count, 0);
  ck_assert(memcmp(get(&d, "quoted name")->str, "x", 1) == 0);
  /* A NUL byte through \00 is kept (strings are byte spans). */
  HlfAttr z = parse_ok("{z = \"a\\00b\"}");
  ck_assert_uint_eq(get(&z, "z")->count, 3);
  ck_assert(memcmp(get(&z, "z")->str, "a\0b", 3) == 0);
}
END_TEST

/* Both printed forms of one config give the same attributes: the braced
 * form reaches us verbatim, the quoted form after HLO unescaping. */
START_TEST(test_both_forms) {
  const char *braced = "{name = \"say \\22hi\\22\\0A\", scale = 2.500000e+00 : f32}";
  /* backend_config="{name = \"say \\\"hi\\\"\\n\", scale = 2.500000e+00 : f32}" decodes to: */
  const char *quoted = "{name = \"say \\\"hi\\\"\\n\", scale = 2.500000e+00 : f32}";
  HlfAttr a = parse_ok(braced), b = parse_ok(quoted);
  ck_assert_uint_eq(a.count, 2);
  ck_assert_uint_eq(b.count, 2);
  const HlfAttr *na = get(&a, "name"), *nb = get(&b, "name");
  ck_assert_uint_eq(na->count, nb->count);
  ck_assert(memcmp(na->str, nb->str, na->count) == 0);
  ck_assert(memcmp(na->str, "say \"hi\"\n", 9) == 0);
  ck_assert(*(float *)get(&a, "scale")->data == *(float *)get(&b, "scale")->data);
}
END_TEST

START_TEST(test_arrays_dense) {
  HlfAttr d = parse_ok("{a = array<i64: 1, -2>, b = array<f32: 1.5, -2.0, 3>, c = array<i32>,"
                       " d = dense<[1, 2]> : tensor<2xi64>,"
                       " e = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>,"
                       " f = dense<7> : tensor<3xi8>, g = dense<\"0x0100000002000000\"> : tensor<2xi32>,"
                       " h = dense<[1.5, 2.0]> : tensor<2xf64>, i = dense<[255, 0]> : tensor<2xui8>,"
                       " j = array<i8: 127, -128>, k = array<f64: 0x3FF0000000000000>}");
  const HlfAttr *a = get(&d, "a");
  ck_assert_int_eq(a->type, XLA_FFI_AttrType_ARRAY);
  ck_assert_int_eq(a->dtype, XLA_FFI_DataType_S64);
  ck_assert_uint_eq(a->count, 2);
  ck_assert(((int64_t *)a->data)[1] == -2);
  const HlfAttr *b = get(&d, "b");
  ck_assert(b->dtype == XLA_FFI_DataType_F32 && b->count == 3);
  ck_assert(((float *)b->data)[0] == 1.5f && ((float *)b->data)[2] == 3.0f);
  ck_assert_uint_eq(get(&d, "c")->count, 0);
  const HlfAttr *e = get(&d, "e");
  ck_assert(e->dtype == XLA_FFI_DataType_S32 && e->count == 4 && ((int32_t *)e->data)[3] == 4);
  const HlfAttr *f = get(&d, "f");
  ck_assert(f->count == 3 && ((int8_t *)f->data)[2] == 7);
  const HlfAttr *g = get(&d, "g");
  ck_assert(g->count == 2 && ((int32_t *)g->data)[0] == 1 && ((int32_t *)g->data)[1] == 2);
  ck_assert(((double *)get(&d, "h")->data)[0] == 1.5);
  ck_assert(get(&d, "i")->dtype == XLA_FFI_DataType_U8 && ((uint8_t *)get(&d, "i")->data)[0] == 255);
  ck_assert(((int8_t *)get(&d, "j")->data)[1] == -128);
  ck_assert(((double *)get(&d, "k")->data)[0] == 1.0);
  ck_assert(get(&d, "d")->count == 2 && ((int64_t *)get(&d, "d")->data)[1] == 2);
}
END_TEST

START_TEST(test_nested_sorted) {
  HlfAttr d = parse_ok("{z = 1, a = {y = \"s\", b = {q = 2, c = 3}}, B = 0, a_b = 1, a.b = 2, ab = 3}");
  const char *order[] = {"B", "a", "a.b", "a_b", "ab", "z"};
  ck_assert_uint_eq(d.count, 6);
  for (int i = 0; i < 6; i++)
    ck_assert(d.items[i].name_len == strlen(order[i]) &&
              !memcmp(d.items[i].name, order[i], d.items[i].name_len));
  const HlfAttr *a = get(&d, "a");
  ck_assert_int_eq(a->type, XLA_FFI_AttrType_DICTIONARY);
  ck_assert(a->items[0].name[0] == 'b' && a->items[1].name[0] == 'y');
  const HlfAttr *ab = &a->items[0];
  ck_assert(ab->items[0].name[0] == 'c' && ab->items[1].name[0] == 'q');
  /* The FFI view mirrors the tree. */
  XLA_FFI_Attrs *f = hlf_attrs_to_ffi(&arena, &d);
  ck_assert_int_eq(f->size, 6);
  ck_assert_uint_eq(f->struct_size, 48);
  ck_assert_int_eq(f->types[1], XLA_FFI_AttrType_DICTIONARY);
  XLA_FFI_Attrs *inner = f->attrs[1];
  ck_assert_uint_eq(inner->struct_size, 48);
  ck_assert_int_eq(inner->size, 2);
  ck_assert(inner->names[1]->len == 1 && inner->names[1]->ptr[0] == 'y');
  XLA_FFI_ByteSpan *y = inner->attrs[1];
  ck_assert(y->len == 1 && y->ptr[0] == 's');
  XLA_FFI_Scalar *z = f->attrs[5];
  ck_assert(z->dtype == XLA_FFI_DataType_S64 && *(int64_t *)z->value == 1);
}
END_TEST

START_TEST(test_errors) {
  parse_err("{a = }", 5, "expected an attribute value, got '}'");
  parse_err("{a = \"x\\q\"}", 7, "unknown escape in string literal: '\\q'");
  parse_err("{a = \"x\\4\"}", 7, "unknown escape");
  parse_err("{a}", 1, "attribute 'a' has no value (unit attributes");
  parse_err("{a = 1, b = 2, a = 3}", 15, "duplicate attribute name 'a'");
  parse_err("{a = 300 : i8}", 5, "integer literal 300 is out of range for i8");
  parse_err("{a = -1 : ui8}", 5, "integer literal -1 is out of range for ui8");
  parse_err("{a = 128 : si8}", 5, "out of range for si8");
  parse_err("{a = 1 : f32}", 5, "unexpected decimal integer literal for a floating point value");
  parse_err("{a = 1.5 : i32}", 5, "floating point literal 1.5 is not valid for integer type i32");
  parse_err("{a = 1 : i4}", 9, "unsupported type 'i4'");
  parse_err("{a = [1, 2]}", 5, "array attributes [...] are not supported");
  parse_err("{a = @f}", 5, "symbol references are not supported");
  parse_err("{a = #foo<1>}", 5, "dialect attributes");
  parse_err("{a = unit}", 5, "unit attributes are not supported");
  parse_err("{a = \"abc}", 5, "unterminated string literal");
  parse_err("{a = 1", 6, "expected ',' or '}' in attribute dictionary, got end of backend_config");
  parse_err("{a = 1} x", 8, "unexpected 'x' after the attribute dictionary");
  parse_err("[1]", 0, "expected '{' (backend_config must be an attribute dictionary)");
  parse_err("42", 0, "expected '{'");
  parse_err("{a = array<i1: true>}", 11, "array<> of i1 is not supported");
  parse_err("{a = array<ui8: 1>}", 11, "array<> takes signless integer or float elements");
  parse_err("{a = dense<[1, 2, 3]> : tensor<2xi32>}", 33,
            "dense<> has 3 elements but its tensor type has 2");
  parse_err("{a = dense<[1]> : tensor<?xi32>}", 25, "dynamic dimensions");
  parse_err("{a = dense<[true]> : tensor<1xi1>}", 12, "dense<> of i1");
  parse_err("{a = 99999999999999999999}", 5, "does not fit in 64 bits");
  parse_err("{a = true : i32}", 12, "true/false take type i1");
  parse_err("{a = 1 : }", 9, "expected a type, got '}'");
  parse_err("{a = - }", 7, "expected a number, got '}'");
  parse_err("{a = 1 b = 2}", 7, "expected ',' or '}'");
  parse_err("{a = 1,}", 7, "expected an attribute name, got '}'");
  parse_err("{= 1}", 1, "expected an attribute name, got '='");
  parse_err("{a = 1 : f32x}", 9, "unsupported type 'f32x'");
  parse_err("{a = 0x1FFFF : f16}", 5, "does not fit in 16 bits");
  /* A NUL byte inside the text is an error, never the end of the text. */
  HlfAttr root;
  size_t off;
  char *err;
  ck_assert_int_eq(hlf_attrs_parse(&arena, "{a = 1\0}", 8, &root, &off, &err), -1);
  ck_assert_uint_eq(off, 6);
  free(err);
}
END_TEST

START_TEST(test_deep_nesting) {
  /* 1000 nested dictionaries: an error, not a stack overflow. */
  size_t n = 1000;
  char *s = malloc(n * 6 + 8);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) { memcpy(s + k, "{a = ", 5); k += 5; }
  s[k++] = '1';
  for (size_t i = 0; i < n; i++) s[k++] = '}';
  s[k] = 0;
  HlfAttr root;
  size_t off;
  char *err = NULL;
  ck_assert_int_eq(hlf_attrs_parse(&arena, s, k, &root, &off, &err), -1);
  ck_assert(strstr(err, "nested too deeply"));
  free(err);
  free(s);
}
END_TEST

/* Offsets inside the quoted form are mapped through the HLO escapes. */
START_TEST(test_source_offsets) {
  /* source: backend_config="{s = \"a\\\"\", x = 1 : i7}" */
  const char *src = "x backend_config=\"{s = \\\"a\\\\\\\"\\\", x = \\101 : i7}\"";
  HloModule m;
  memset(&m, 0, sizeof m);
  m.source = src;
  m.source_len = strlen(src);
  HloInstr ins;
  memset(&ins, 0, sizeof ins);
  ins.backend_config_quoted = true;
  ins.backend_config_off = 18;
  /* decoded: {s = "a\"", x = A : i7}  ('\101' octal is 'A') */
  const char *raw = "{s = \"a\\\"\", x = A : i7}";
  size_t i7 = (size_t)(strstr(raw, "i7") - raw);
  ck_assert_uint_eq(hlf_config_source_offset(&m, &ins, i7), (size_t)(strstr(src, "i7") - src));
  size_t A = (size_t)(strchr(raw, 'A') - raw);
  ck_assert_uint_eq(hlf_config_source_offset(&m, &ins, A), (size_t)(strstr(src, "\\101") - src));
  ins.backend_config_quoted = false;
  ck_assert_uint_eq(hlf_config_source_offset(&m, &ins, 3), 21);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("ffi_attrs");
  TCase *t = tcase_create("attrs");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, test_empty);
  tcase_add_test(t, test_scalars);
  tcase_add_test(t, test_narrow_floats);
  tcase_add_test(t, test_strings);
  tcase_add_test(t, test_both_forms);
  tcase_add_test(t, test_arrays_dense);
  tcase_add_test(t, test_nested_sorted);
  tcase_add_test(t, test_errors);
  tcase_add_test(t, test_deep_nesting);
  tcase_add_test(t, test_source_offsets);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tl_main(suite()); }

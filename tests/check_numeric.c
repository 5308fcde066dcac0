/* check_numeric.c: element conversions, range checks and XLA-style element
 * text (common/numeric.c). Every expected bit pattern is worked out by hand
 * from the format definitions (sign | exponent | mantissa, bias). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/numeric.h"
#include "tests/testlib.h"

static uint64_t enc(HloDtype t, double v) { return hlc_float_bits_from_f64(t, v); }
static double dec(HloDtype t, uint64_t b) { return hlc_float_bits_to_f64(t, b); }

static const char *fmt_bits(HloDtype t, uint64_t b) {
  static char buf[128];
  uint8_t raw[16] = {0};
  memcpy(raw, &b, hlc_dtype_size(t) < 8 ? hlc_dtype_size(t) : 8);
  hlc_format_element(t, raw, buf, sizeof buf);
  return buf;
}

static const char *fmt_f32(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return fmt_bits(HLO_F32, u);
}
static const char *fmt_f64(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return fmt_bits(HLO_F64, u);
}

START_TEST(f16_patterns) {
  ck_assert_uint_eq(enc(HLO_F16, 1.0), 0x3C00);
  ck_assert_uint_eq(enc(HLO_F16, -2.0), 0xC000);
  ck_assert_uint_eq(enc(HLO_F16, 65504.0), 0x7BFF);
  ck_assert_uint_eq(enc(HLO_F16, 0x1p-24), 0x0001);        /* smallest denormal */
  ck_assert_uint_eq(enc(HLO_F16, 0x1p-14), 0x0400);        /* smallest normal */
  ck_assert_uint_eq(enc(HLO_F16, 0x1p-25), 0x0000);        /* tie -> even (0) */
  ck_assert_uint_eq(enc(HLO_F16, 0x1.8p-24), 0x0002);      /* 1.5 quanta -> 2 (even) */
  ck_assert_uint_eq(enc(HLO_F16, 65519.0), 0x7BFF);
  ck_assert_uint_eq(enc(HLO_F16, 65520.0), 0x7C00);        /* halfway to 2^16 -> inf */
  ck_assert_uint_eq(enc(HLO_F16, 1.0 + 0x1p-11), 0x3C00);  /* tie, even stays */
  ck_assert_uint_eq(enc(HLO_F16, 1.0 + 3 * 0x1p-11), 0x3C02); /* tie, odd rounds up */
  ck_assert_uint_eq(enc(HLO_F16, -0.0), 0x8000);
  ck_assert_uint_eq(enc(HLO_F16, -INFINITY), 0xFC00);
  ck_assert_uint_eq(enc(HLO_F16, NAN) & 0x7E00, 0x7E00);
  ck_assert(dec(HLO_F16, 0x0001) == 0x1p-24);
  ck_assert(dec(HLO_F16, 0x7BFF) == 65504.0);
  ck_assert(isinf(dec(HLO_F16, 0x7C00)));
  ck_assert(isnan(dec(HLO_F16, 0x7C01)));
  /* the fast f32 paths agree with the generic one */
  ck_assert_uint_eq(hlc_f32_to_f16(65520.0f), 0x7C00);
  ck_assert_uint_eq(hlc_f32_to_f16(0x1p-24f), 0x0001);
  ck_assert_uint_eq(hlc_f32_to_f16(0x1.8p-24f), 0x0002);
  ck_assert_uint_eq(hlc_f32_to_f16(0x1p-25f), 0x0000);
  ck_assert_uint_eq(hlc_f32_to_f16(0x1.000002p-25f), 0x0001);
  ck_assert_uint_eq(hlc_f32_to_f16(1.0f + 0x1p-11f), 0x3C00);
  ck_assert_uint_eq(hlc_f32_to_f16(-3.0f), 0xC200);
  ck_assert(hlc_f16_to_f32(0x3555) == 0x1.554p-2f);
  ck_assert(hlc_f16_to_f32(0x8001) == -0x1p-24f);
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7FFF) > 0x7C00) continue;
    ck_assert_uint_eq(hlc_f32_to_f16(hlc_f16_to_f32((uint16_t)h)), h);
    ck_assert_uint_eq(enc(HLO_F16, dec(HLO_F16, h)), h);
  }
}
END_TEST

START_TEST(bf16_patterns) {
  ck_assert_uint_eq(enc(HLO_BF16, 1.0), 0x3F80);
  ck_assert_uint_eq(enc(HLO_BF16, 0.1), 0x3DCD);            /* 0x3DCCCCCD rounds up */
  ck_assert_uint_eq(hlc_f32_to_bf16(0.1f), 0x3DCD);
  /* 1 + 2^-8 is halfway between 1 and 1+2^-7: even (1) wins */
  ck_assert_uint_eq(hlc_f32_to_bf16(1.0f + 0x1p-8f), 0x3F80);
  ck_assert_uint_eq(hlc_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);
  ck_assert_uint_eq(hlc_f32_to_bf16(0x1.fffffep127f), 0x7F80);  /* rounds to inf */
  ck_assert_uint_eq(hlc_f32_to_bf16(-NAN), 0xFFC0);
  ck_assert_uint_eq(enc(HLO_BF16, 0x1p-133), 0x0001);       /* smallest denormal */
  ck_assert(dec(HLO_BF16, 0x7F7F) == 0x1.fep127);
}
END_TEST

START_TEST(f8_patterns) {
  /* f8e5m2: bias 15, IEEE. max 57344 = 1.75*2^15, min normal 2^-14, denormal 2^-16 */
  ck_assert_uint_eq(enc(HLO_F8E5M2, 57344), 0x7B);
  ck_assert_uint_eq(enc(HLO_F8E5M2, 61440), 0x7C);          /* halfway -> inf */
  ck_assert_uint_eq(enc(HLO_F8E5M2, 0x1p-14), 0x04);
  ck_assert_uint_eq(enc(HLO_F8E5M2, 0x1p-16), 0x01);
  ck_assert_uint_eq(enc(HLO_F8E5M2, -INFINITY), 0xFC);
  ck_assert(isnan(dec(HLO_F8E5M2, 0x7E)));
  /* f8e4m3: bias 7, IEEE: max 240, min normal 2^-6, denormal 2^-9 */
  ck_assert_uint_eq(enc(HLO_F8E4M3, 240), 0x77);
  ck_assert_uint_eq(enc(HLO_F8E4M3, 248), 0x78);            /* halfway -> inf */
  ck_assert_uint_eq(enc(HLO_F8E4M3, 0x1p-9), 0x01);
  ck_assert_uint_eq(enc(HLO_F8E4M3, 0x1p-6), 0x08);
  /* f8e4m3fn: max 448 (0x7E), 0x7F NaN; 464 ties to 448, larger -> NaN */
  ck_assert_uint_eq(enc(HLO_F8E4M3FN, 448), 0x7E);
  ck_assert_uint_eq(enc(HLO_F8E4M3FN, 464), 0x7E);
  ck_assert_uint_eq(enc(HLO_F8E4M3FN, 465), 0x7F);
  ck_assert_uint_eq(enc(HLO_F8E4M3FN, -1000), 0xFF);
  ck_assert_uint_eq(enc(HLO_F8E4M3FN, INFINITY), 0x7F);
  ck_assert_uint_eq(enc(HLO_F8E4M3FN, 0x1p-9), 0x01);
  ck_assert_uint_eq(enc(HLO_F8E4M3FN, -0.0), 0x80);
  ck_assert(dec(HLO_F8E4M3FN, 0x7E) == 448);
  ck_assert(isnan(dec(HLO_F8E4M3FN, 0xFF)));
  ck_assert(dec(HLO_F8E4M3FN, 0x78) == 256);                /* exp 1111 is finite */
  /* f8e4m3b11fnuz: bias 11, max 30, min normal 2^-10, denormal 2^-13 */
  ck_assert_uint_eq(enc(HLO_F8E4M3B11FNUZ, 30), 0x7F);
  ck_assert_uint_eq(enc(HLO_F8E4M3B11FNUZ, 0x1p-10), 0x08);
  ck_assert_uint_eq(enc(HLO_F8E4M3B11FNUZ, 0x1p-13), 0x01);
  ck_assert_uint_eq(enc(HLO_F8E4M3B11FNUZ, 32), 0x80);      /* overflow -> NaN */
  ck_assert_uint_eq(enc(HLO_F8E4M3B11FNUZ, -0.0), 0x00);    /* no -0 */
  ck_assert_uint_eq(enc(HLO_F8E4M3B11FNUZ, -0x1p-20), 0x00); /* underflow: +0 */
  /* f8e4m3fnuz: bias 8, max 240, denormal 2^-10 */
  ck_assert_uint_eq(enc(HLO_F8E4M3FNUZ, 240), 0x7F);
  ck_assert_uint_eq(enc(HLO_F8E4M3FNUZ, 0x1p-10), 0x01);
  ck_assert_uint_eq(enc(HLO_F8E4M3FNUZ, NAN), 0x80);
  ck_assert_uint_eq(enc(HLO_F8E4M3FNUZ, -INFINITY), 0x80);
  ck_assert(isnan(dec(HLO_F8E4M3FNUZ, 0x80)));
  ck_assert(dec(HLO_F8E4M3FNUZ, 0x00) == 0);
  /* f8e5m2fnuz: bias 16, max 57344, denormal 2^-17 */
  ck_assert_uint_eq(enc(HLO_F8E5M2FNUZ, 57344), 0x7F);
  ck_assert_uint_eq(enc(HLO_F8E5M2FNUZ, 0x1p-17), 0x01);
  ck_assert_uint_eq(enc(HLO_F8E5M2FNUZ, -1.0), 0xC0);       /* 1 = 10000.00 */
  /* f8e3m4: bias 3, IEEE: max 15.5, min normal 0.25, denormal 2^-6 */
  ck_assert_uint_eq(enc(HLO_F8E3M4, 15.5), 0x6F);
  ck_assert_uint_eq(enc(HLO_F8E3M4, 16), 0x70);
  ck_assert_uint_eq(enc(HLO_F8E3M4, 0.25), 0x10);
  ck_assert_uint_eq(enc(HLO_F8E3M4, 0x1p-6), 0x01);
  /* f8e8m0fnu: 2^(b-127); NaN 0xFF; ties to even exponent field */
  ck_assert_uint_eq(enc(HLO_F8E8M0FNU, 1.0), 0x7F);
  ck_assert_uint_eq(enc(HLO_F8E8M0FNU, 0x1p127), 0xFE);
  ck_assert_uint_eq(enc(HLO_F8E8M0FNU, 0x1p-127), 0x00);
  ck_assert_uint_eq(enc(HLO_F8E8M0FNU, 1.5), 0x80);         /* field 127 odd -> 128 */
  ck_assert_uint_eq(enc(HLO_F8E8M0FNU, 3.0), 0x80);         /* field 128 even stays */
  ck_assert_uint_eq(enc(HLO_F8E8M0FNU, -1.0), 0xFF);
  ck_assert_uint_eq(enc(HLO_F8E8M0FNU, 0x1p128), 0xFF);
  ck_assert(dec(HLO_F8E8M0FNU, 0x80) == 2.0);
  /* f4e2m1fn: bias 1: values 0, 0.5, 1, 1.5, 2, 3, 4, 6 */
  ck_assert_uint_eq(enc(HLO_F4E2M1FN, 6), 0x7);
  ck_assert_uint_eq(enc(HLO_F4E2M1FN, 100), 0x7);           /* saturates */
  ck_assert_uint_eq(enc(HLO_F4E2M1FN, -INFINITY), 0xF);
  ck_assert_uint_eq(enc(HLO_F4E2M1FN, 0.5), 0x1);
  ck_assert_uint_eq(enc(HLO_F4E2M1FN, 0.25), 0x0);          /* tie -> 0 */
  ck_assert_uint_eq(enc(HLO_F4E2M1FN, 0.75), 0x2);          /* tie -> 1 (even) */
  ck_assert_uint_eq(enc(HLO_F4E2M1FN, 5), 0x6);             /* tie 4|6 -> 4 (even) */
  ck_assert_uint_eq(enc(HLO_F4E2M1FN, -3), 0xD);
  ck_assert(dec(HLO_F4E2M1FN, 0x5) == 3.0);
}
END_TEST

START_TEST(fits) {
  ck_assert(hlc_value_fits(HLO_F16, 65504));
  ck_assert(hlc_value_fits(HLO_F16, 65519));
  ck_assert(!hlc_value_fits(HLO_F16, 65520));
  ck_assert(hlc_value_fits(HLO_F16, 1e-30));                /* underflow is fine */
  ck_assert(!hlc_value_fits(HLO_F32, 1e39));
  ck_assert(hlc_value_fits(HLO_F32, 3.4028234663852886e38));
  ck_assert(hlc_value_fits(HLO_F8E4M3FN, 448));
  ck_assert(!hlc_value_fits(HLO_F8E4M3FN, 480));
  ck_assert(!hlc_value_fits(HLO_F4E2M1FN, 7));
  ck_assert(hlc_value_fits(HLO_F4E2M1FN, 6.5));
  ck_assert(hlc_value_fits(HLO_S8, -128));
  ck_assert(!hlc_value_fits(HLO_S8, 128));
  ck_assert(!hlc_value_fits(HLO_S8, 1.5));
  ck_assert(hlc_value_fits(HLO_U64, 18446744073709549568.0));
  ck_assert(!hlc_value_fits(HLO_U64, 18446744073709551616.0));
  ck_assert(hlc_int_fits(HLO_S4, -8, true));
  ck_assert(!hlc_int_fits(HLO_S4, 8, true));
  ck_assert(hlc_int_fits(HLO_U4, 15, true));
  ck_assert(!hlc_int_fits(HLO_U8, -1, true));
  ck_assert(hlc_int_fits(HLO_U64, -1, false));              /* 2^64-1 as a pattern */
  ck_assert(!hlc_int_fits(HLO_S64, -1, false));
  ck_assert(hlc_int_fits(HLO_S64, INT64_MIN, true));
}
END_TEST

START_TEST(load_store) {
  uint8_t b[16];
  hlc_store_f64(HLO_S8, b, 300.7);
  ck_assert_int_eq((int8_t)b[0], 127);                      /* saturates */
  hlc_store_f64(HLO_S8, b, -2.9);
  ck_assert_int_eq((int8_t)b[0], -2);                       /* toward zero */
  hlc_store_f64(HLO_U8, b, -5);
  ck_assert_int_eq(b[0], 0);
  hlc_store_f64(HLO_S32, b, NAN);
  ck_assert_int_eq(hlc_load_i64(HLO_S32, b), 0);
  hlc_store_f64(HLO_S64, b, 1e30);
  ck_assert(hlc_load_i64(HLO_S64, b) == INT64_MAX);
  hlc_store_f64(HLO_U64, b, 1e30);
  ck_assert(*(uint64_t *)b == UINT64_MAX);
  hlc_store_i64(HLO_S8, b, 200);
  ck_assert_int_eq((int8_t)b[0], -56);                      /* wraps */
  hlc_store_i64(HLO_S4, b, 9);
  ck_assert_int_eq((int8_t)b[0], -7);                       /* 1001 = -7, sign-extended */
  ck_assert_int_eq(hlc_load_i64(HLO_S4, b), -7);
  hlc_store_i64(HLO_U4, b, -1);
  ck_assert_int_eq(b[0], 15);
  hlc_store_i64(HLO_PRED, b, 5);
  ck_assert_int_eq(b[0], 1);
  hlc_store_i64(HLO_F32, b, 16777217);                      /* ties to even */
  ck_assert(*(float *)b == 16777216.0f);
  hlc_store_i64(HLO_BF16, b, 257);
  ck_assert_uint_eq(*(uint16_t *)b, 0x4380);                /* 256 */
  hlc_store_f64(HLO_C64, b, 2.5);
  ck_assert(((float *)b)[0] == 2.5f && ((float *)b)[1] == 0);
  ((float *)b)[1] = 7;
  ck_assert(hlc_load_f64(HLO_C64, b) == 2.5);
  uint16_t h = 0x3C00;
  ck_assert(hlc_load_f64(HLO_F16, &h) == 1.0);
  uint64_t big = UINT64_MAX;
  ck_assert(hlc_load_f64(HLO_U64, &big) == 0x1p64);
}
END_TEST

START_TEST(format) {
  ck_assert_str_eq(fmt_f32(1.0f), "1");
  ck_assert_str_eq(fmt_f32(0.1f), "0.1");
  ck_assert_str_eq(fmt_f32(1e-5f), "1e-05");
  ck_assert_str_eq(fmt_f32(3.40282347e+38f), "3.40282347e+38");
  ck_assert_str_eq(fmt_f32(-0.0f), "-0");
  ck_assert_str_eq(fmt_f32(INFINITY), "inf");
  ck_assert_str_eq(fmt_f32(-INFINITY), "-inf");
  ck_assert_str_eq(fmt_f32(NAN), "nan");
  ck_assert_str_eq(fmt_f32(-NAN), "-nan");
  ck_assert_str_eq(fmt_f32(1234567.0f), "1234567");           /* 6 digits fail -> 9 */
  ck_assert_str_eq(fmt_f32(100000.0f), "100000");
  ck_assert_str_eq(fmt_f32(1e6f), "1e+06");
  ck_assert_str_eq(fmt_bits(HLO_F32, 0x7F800001), "nan(0x1)");
  ck_assert_str_eq(fmt_bits(HLO_F32, 0xFFC00001), "-nan(0x400001)");
  ck_assert_str_eq(fmt_f64(0.1), "0.1");
  ck_assert_str_eq(fmt_f64(1.0 / 3), "0.33333333333333331");
  ck_assert_str_eq(fmt_bits(HLO_F64, 0x7FF8000000000000ull), "nan");
  /* narrow types: %.*g with max_digits10 of the type */
  ck_assert_str_eq(fmt_bits(HLO_BF16, 0x3DCD), "0.1001");       /* 0.10009765625 */
  ck_assert_str_eq(fmt_bits(HLO_BF16, 0x4230), "44");
  ck_assert_str_eq(fmt_bits(HLO_BF16, 0x7FC3), "nan(0x43)");
  ck_assert_str_eq(fmt_bits(HLO_BF16, 0xFF81), "-nan(0x1)");
  ck_assert_str_eq(fmt_bits(HLO_F16, 0x3555), "0.33325");      /* 0.333251953125 */
  ck_assert_str_eq(fmt_bits(HLO_F16, 0x7BFF), "65504");
  ck_assert_str_eq(fmt_bits(HLO_F16, 0x0001), "5.9605e-08");
  ck_assert_str_eq(fmt_bits(HLO_F16, 0x7E00), "nan");
  ck_assert_str_eq(fmt_bits(HLO_F8E4M3FN, 0x7E), "448");
  ck_assert_str_eq(fmt_bits(HLO_F8E4M3FN, 0x7F), "nan");
  ck_assert_str_eq(fmt_bits(HLO_F8E4M3FN, 0x01), "0.00195");   /* 2^-9 to 3 digits */
  ck_assert_str_eq(fmt_bits(HLO_F8E5M2, 0x7B), "5.7e+04");     /* 57344 to 2 digits */
  ck_assert_str_eq(fmt_bits(HLO_F8E5M2, 0x7D), "nan(0x1)");
  ck_assert_str_eq(fmt_bits(HLO_F8E4M3FNUZ, 0x80), "-nan");
  ck_assert_str_eq(fmt_bits(HLO_F4E2M1FN, 0xF), "-6");
  ck_assert_str_eq(fmt_bits(HLO_F4E2M1FN, 0x8), "-0");
  ck_assert_str_eq(fmt_bits(HLO_F8E8M0FNU, 0x7F), "1");
  /* ints, pred, complex */
  int8_t s4 = -8;
  char buf[64];
  hlc_format_element(HLO_S4, &s4, buf, sizeof buf);
  ck_assert_str_eq(buf, "-8");
  uint64_t u = UINT64_MAX;
  hlc_format_element(HLO_U64, &u, buf, sizeof buf);
  ck_assert_str_eq(buf, "18446744073709551615");
  uint8_t p = 1;
  hlc_format_element(HLO_PRED, &p, buf, sizeof buf);
  ck_assert_str_eq(buf, "true");
  float c[2] = {1.5f, -2.0f};
  hlc_format_element(HLO_C64, c, buf, sizeof buf);
  ck_assert_str_eq(buf, "(1.5, -2)");
  /* truncation keeps a terminated prefix */
  char small[3];
  hlc_format_element(HLO_C64, c, small, sizeof small);
  ck_assert_str_eq(small, "(1");
}
END_TEST

static Suite *numeric_suite(void) {
  Suite *s = suite_create("numeric");
  TCase *tc = tcase_create("convert");
  tcase_add_test(tc, f16_patterns);
  tcase_add_test(tc, bf16_patterns);
  tcase_add_test(tc, f8_patterns);
  tcase_add_test(tc, fits);
  tcase_add_test(tc, load_store);
  suite_add_tcase(s, tc);
  TCase *tf = tcase_create("format");
  tcase_add_test(tf, format);
  suite_add_tcase(s, tf);
  return s;
}

int main(void) { return tl_main(numeric_suite()); }

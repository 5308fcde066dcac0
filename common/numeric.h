/* numeric.h: conversions between HLO element types and host numbers, and the
 * text form of one element the way XLA prints literals.
 *
 * Narrow floats (f16, bf16, the f8 family, f4e2m1fn) are stored as raw bit
 * patterns (uint16_t / uint8_t). Conversions into them round to nearest even
 * and follow each format's rules (no inf in *fn types: overflow -> NaN;
 * fnuz types: one NaN 0x80 and no -0; f8e8m0fnu: exponent only).
 * Used by the parser (literals), the interpreter (convert and friends) and
 * the command line (printing). */
#ifndef HLORUN_COMMON_NUMERIC_H
#define HLORUN_COMMON_NUMERIC_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "common/dtype.h"

/* Float kinds only (including f32/f64): value -> bit pattern, rounding to
 * nearest even. The result is in the low bits. */
uint64_t hlc_float_bits_from_f64(HloDtype t, double v);
uint64_t hlc_float_bits_from_f32(HloDtype t, float v);
/* Float kinds only: bit pattern -> value (exact). */
double hlc_float_bits_to_f64(HloDtype t, uint64_t bits);
float hlc_float_bits_to_f32(HloDtype t, uint64_t bits);

/* Fast paths used in kernels. */
float hlc_f16_to_f32(uint16_t h);
uint16_t hlc_f32_to_f16(float f);
static inline float hlc_bf16_to_f32(uint16_t b) {
  union { uint32_t u; float f; } x = { (uint32_t)b << 16 };
  return x.f;
}
uint16_t hlc_f32_to_bf16(float f);

/* For literal parsing: does the finite value v fit in type t without
 * overflowing to infinity (or NaN for types without infinity)? Integer
 * kinds: is v an integer in range? */
bool hlc_value_fits(HloDtype t, double v);
/* Integer kinds: is the 64-bit value (signed if is_signed) in range of t? */
bool hlc_int_fits(HloDtype t, int64_t v, bool is_signed);

/* Read one element of array type t at p as double / int64 / uint64.
 * Complex: the real part. Integers are converted exactly where possible. */
double hlc_load_f64(HloDtype t, const void *p);
int64_t hlc_load_i64(HloDtype t, const void *p);
/* Store a double / int64 into an element of type t, with XLA's convert
 * semantics (float->int saturates, NaN->0; int->narrow int wraps). */
void hlc_store_f64(HloDtype t, void *p, double v);
void hlc_store_i64(HloDtype t, void *p, int64_t v);
/* The values of an iota of n elements: dst[i] = i stored in type t as
 * hlc_store_i64 stores it (integers wrap, floats round, pred is i != 0). */
void hlc_store_iota(HloDtype t, void *dst, int64_t n);

/* Text of one element as XLA prints it in a literal: shortest round-trip
 * float form ("1", "0.1", "1e-05", "-inf", "nan", "-nan(0x1)"), integers in
 * decimal, pred "true"/"false" (scalar form) , complex "(re, im)".
 * Returns the length written (always NUL-terminated, truncated to n). */
int hlc_format_element(HloDtype t, const void *p, char *buf, size_t n);
#endif

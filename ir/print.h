/* print.h: canonical HLO text of the IR (print.c): the whole module, and the
 * pieces (shapes, attribute values, literals) front ends and the run path
 * print on their own, into a small growable text buffer. */
#ifndef HLORUN_IR_PRINT_H
#define HLORUN_IR_PRINT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ir/ir.h"

/* Canonical HLO text of the module (malloc'd, NUL-terminated; *len set when
 * len != NULL). Printing the printed text again gives the same text. */
char *hlp_print(const HloModule *m, size_t *len);

/* Small text buffer used by the printer and normalisers (print.c). */
typedef struct HlpBuf { char *p; size_t n, cap; bool oom; } HlpBuf;
void hlp_buf_put(HlpBuf *b, const char *s, size_t n);
void hlp_buf_puts(HlpBuf *b, const char *s);
void hlp_buf_printf(HlpBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hlp_print_shape(HlpBuf *b, const HloShape *s, bool layouts);
void hlp_print_val(HlpBuf *b, const HloVal *v);
/* A string body with C escapes (quote escaped); a literal as in constant(...). */
void hlp_put_escaped(HlpBuf *b, const char *s, size_t n, char quote);
void hlp_print_literal(HlpBuf *b, const HloLiteral *l);
void hlp_print_vals(HlpBuf *b, HloVal *const *v, int32_t n, bool top);
/* A sharding in XLA's form, braces included (ir/sharding.c). */
struct HloSharding;
void hlp_print_sharding(HlpBuf *b, const struct HloSharding *s);
#endif

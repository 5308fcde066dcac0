/* text.h: the one growable buffer, for text and for bytes (printers, .npy
 * and proto writers, generated HLO). An append that cannot get memory sets
 * oom and every later append does nothing, so a writer checks oom once, at
 * the end, instead of after every call. The contents stay NUL-terminated. */
#ifndef HLORUN_COMMON_TEXT_H
#define HLORUN_COMMON_TEXT_H
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct HlcText {
  char *p;        /* owned; NULL until the first append */
  size_t n, cap;  /* bytes written (without the NUL), bytes allocated */
  bool oom;       /* an append failed: the contents are incomplete */
} HlcText;

void hlc_text_put(HlcText *t, const void *s, size_t n);
void hlc_text_puts(HlcText *t, const char *s);
void hlc_text_putc(HlcText *t, char c);
void hlc_text_printf(HlcText *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hlc_text_vprintf(HlcText *t, const char *fmt, va_list ap);
/* The contents, now the caller's ("" when nothing was written); NULL, with
 * the buffer freed, after a failed append. The buffer is empty afterwards. */
char *hlc_text_take(HlcText *t);
void hlc_text_free(HlcText *t);

#endif

/* text.c: see text.h. */
#include "common/text.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes and the NUL; doubling keeps appends amortised O(1). */
static bool reserve(HlcText *t, size_t n) {
  if (t->oom) return false;
  if (n > SIZE_MAX - t->n - 1) { t->oom = true; return false; }
  if (t->n + n + 1 <= t->cap) return true;
  size_t cap = t->cap ? t->cap : 256;
  while (cap < t->n + n + 1) cap = cap > SIZE_MAX / 2 ? t->n + n + 1 : cap * 2;
  char *p = realloc(t->p, cap);
  if (!p) { t->oom = true; return false; }
  t->p = p;
  t->cap = cap;
  return true;
}

void hlc_text_put(HlcText *t, const void *s, size_t n) {
  if (!reserve(t, n)) return;
  if (n) memcpy(t->p + t->n, s, n);
  t->n += n;
  t->p[t->n] = 0;
}

void hlc_text_puts(HlcText *t, const char *s) { hlc_text_put(t, s, strlen(s)); }

void hlc_text_putc(HlcText *t, char c) { hlc_text_put(t, &c, 1); }

void hlc_text_vprintf(HlcText *t, const char *fmt, va_list ap) {
  if (t->oom) return;
  va_list again;
  va_copy(again, ap);
  char small[256];
  int k = vsnprintf(small, sizeof small, fmt, ap);
  if (k < 0) { t->oom = true; va_end(again); return; }
  if ((size_t)k < sizeof small) {
    hlc_text_put(t, small, (size_t)k);
  } else if (reserve(t, (size_t)k)) {   /* long: format straight into the buffer */
    vsnprintf(t->p + t->n, (size_t)k + 1, fmt, again);
    t->n += (size_t)k;
  }
  va_end(again);
}

void hlc_text_printf(HlcText *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  hlc_text_vprintf(t, fmt, ap);
  va_end(ap);
}

char *hlc_text_take(HlcText *t) {
  char *p = t->oom ? NULL : t->p ? t->p : strdup("");
  if (t->oom) free(t->p);
  memset(t, 0, sizeof *t);
  return p;
}

void hlc_text_free(HlcText *t) {
  free(t->p);
  memset(t, 0, sizeof *t);
}

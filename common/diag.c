/* diag.c: see diag.h. */
#include "common/diag.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hlc_line_col(const char *src, size_t len, size_t off, int *line, int *col) {
  int l = 1;
  size_t start = 0;
  if (off > len) off = len;
  for (size_t i = 0; i < off; i++)
    if (src[i] == '\n') { l++; start = i + 1; }
  *line = l;
  *col = (int)(off - start) + 1;
}

static void push(HlcDiags *d, HlcSeverity sev, int line, int col, char *msg, char *text) {
  if (sev == HLC_ERROR) d->nerrors++;
  if (sev == HLC_WARNING) d->nwarnings++;
  int max = d->max_errors ? d->max_errors : 20;
  if (sev == HLC_ERROR && d->nerrors > max) { free(msg); free(text); return; }
  if (d->n == d->cap) {
    int cap = d->cap ? d->cap * 2 : 8;
    HlcDiag *v = realloc(d->v, (size_t)cap * sizeof *v);
    if (!v) { free(msg); free(text); return; }
    d->v = v;
    d->cap = cap;
  }
  d->v[d->n++] = (HlcDiag){sev, line, col, text, msg};
}

static const char *sev_name(HlcSeverity s) {
  return s == HLC_ERROR ? "error" : s == HLC_WARNING ? "warning" : "note";
}

static char *vfmt(const char *fmt, va_list ap) {
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) return NULL;
  return s;
}

void hlc_diag_at(HlcDiags *d, HlcSeverity sev, const char *file, const char *src,
                 size_t len, size_t off, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = vfmt(fmt, ap);
  va_end(ap);
  if (!msg) return;
  if (!file) file = "<input>";
  char *text = NULL;
  int line = 0, col = 0;
  if (src) {
    hlc_line_col(src, len, off, &line, &col);
    size_t ls = off > len ? len : off;
    while (ls > 0 && src[ls - 1] != '\n') ls--;
    size_t le = ls;
    while (le < len && src[le] != '\n' && src[le] != '\r') le++;
    /* The caret line keeps tabs so it lines up under the source line. */
    size_t nc = (size_t)(col - 1);
    char *pad = malloc(nc + 1);
    if (!pad) { free(msg); return; }
    for (size_t i = 0; i < nc; i++) pad[i] = src[ls + i] == '\t' ? '\t' : ' ';
    pad[nc] = 0;
    if (asprintf(&text, "%s:%d:%d: %s: %s\n%.*s\n%s^\n", file, line, col, sev_name(sev), msg,
                 (int)(le - ls), src + ls, pad) < 0)
      text = NULL;
    free(pad);
  } else if (asprintf(&text, "%s: %s: %s\n", file, sev_name(sev), msg) < 0) {
    text = NULL;
  }
  if (!text) { free(msg); return; }
  push(d, sev, line, col, msg, text);
}

void hlc_diag(HlcDiags *d, HlcSeverity sev, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = vfmt(fmt, ap);
  va_end(ap);
  if (!msg) return;
  char *text = NULL;
  if (asprintf(&text, "%s: %s\n", sev_name(sev), msg) < 0) { free(msg); return; }
  push(d, sev, 0, 0, msg, text);
}

void hlc_diags_clear(HlcDiags *d) {
  for (int i = 0; i < d->n; i++) { free(d->v[i].text); free(d->v[i].message); }
  free(d->v);
  int max = d->max_errors;
  memset(d, 0, sizeof *d);
  d->max_errors = max;
}

void hlc_diags_move_as_warnings(HlcDiags *dst, HlcDiags *src) {
  for (int i = 0; i < src->n; i++) {
    HlcDiag *x = &src->v[i];
    char *text = x->text;
    if (x->sev == HLC_ERROR && text) {
      /* Re-render "...: error: MSG" as "...: warning: MSG". */
      char *at = strstr(text, "error: ");
      size_t n = strlen(text);
      char *t = at ? malloc(n + 3) : NULL;
      if (t) {
        size_t pre = (size_t)(at - text);
        memcpy(t, text, pre);
        memcpy(t + pre, "warning: ", 9);
        memcpy(t + pre + 9, at + 7, n - pre - 7 + 1);
        free(text);
        text = t;
      }
    }
    push(dst, x->sev == HLC_ERROR ? HLC_WARNING : x->sev, x->line, x->col, x->message, text);
    x->message = x->text = NULL;
  }
  free(src->v);
  memset(src, 0, sizeof *src);
}

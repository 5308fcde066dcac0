/* diag.h: diagnostics (errors, warnings) collected by the library and
 * rendered by whoever reports them. Source positions are byte offsets,
 * turned into FILE:LINE:COL plus the offending line and a caret only when a
 * diagnostic is made. No stdio here. */
#ifndef HLORUN_COMMON_DIAG_H
#define HLORUN_COMMON_DIAG_H
#include <stddef.h>
#include <stdint.h>

typedef enum { HLC_NOTE, HLC_WARNING, HLC_ERROR } HlcSeverity;

typedef struct HlcDiag {
  HlcSeverity sev;
  int line, col;      /* 1-based; 0 if no position */
  char *text;         /* owned: whole rendered text, ends with '\n' */
  char *message;      /* owned: the message alone */
} HlcDiag;

typedef struct HlcDiags {
  int n, cap;
  HlcDiag *v;         /* owned */
  int nerrors, nwarnings;
  int max_errors;     /* stop recording errors after this many (0 = 20) */
} HlcDiags;

/* Line (1-based) and column (1-based, in bytes) of offset off in src. */
void hlc_line_col(const char *src, size_t len, size_t off, int *line, int *col);

/* "FILE:LINE:COL: error: MSG\n<source line>\n<spaces>^\n". src may be NULL
 * (then "FILE: error: MSG\n"). file may be NULL ("<input>"). */
void hlc_diag_at(HlcDiags *d, HlcSeverity sev, const char *file, const char *src,
                 size_t len, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* A diagnostic without a source position: "error: MSG\n". */
void hlc_diag(HlcDiags *d, HlcSeverity sev, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void hlc_diags_clear(HlcDiags *d);   /* frees all and resets */
/* Move every diagnostic of src to dst, errors re-rendered as warnings
 * (src is left empty). */
void hlc_diags_move_as_warnings(HlcDiags *dst, HlcDiags *src);
#endif

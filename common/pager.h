/* pager.h: bytes of a file that are read only when a decoder reaches them.
 *
 * A large input file (a snapshot's multi-GB argument, a big .npy) is read
 * into an image of the whole file whose large payloads are left unread
 * (interp/files.c): the decoders that copy a payload into its value's buffer
 * ask for each piece just before they read it (need) and give it back once
 * copied (done), so the bytes are held once, in the value. Everything else
 * in the image (field keys, lengths, headers) is read up front, so code that
 * only walks a file's structure needs no pager. A NULL pager means the bytes
 * are plain memory: need and done then do nothing. */
#ifndef HLORUN_COMMON_PAGER_H
#define HLORUN_COMMON_PAGER_H
#include <stddef.h>
#include <string.h>

typedef struct HlcPager HlcPager;
struct HlcPager {
  /* Make [p, p + n) of the image hold the file's bytes. A file that came
   * back short (it shrank meanwhile) leaves zeros, and the pager's owner
   * reports the short read when the file is closed: decoders go on. */
  void (*need)(HlcPager *pg, const void *p, size_t n);
  /* [p, p + n) has been copied: its memory may be released (need reads it
   * again). */
  void (*done)(HlcPager *pg, const void *p, size_t n);
  /* Copy [p, p + n) of the image into dst, its holes read from the file
   * straight into dst (never through the image): for payloads whose bytes
   * are their values' bytes. */
  void (*copy)(HlcPager *pg, void *dst, const void *p, size_t n);
};

static inline void hlc_need(HlcPager *pg, const void *p, size_t n) {
  if (pg && n) pg->need(pg, p, n);
}
static inline void hlc_done(HlcPager *pg, const void *p, size_t n) {
  if (pg && n) pg->done(pg, p, n);
}
static inline void hlc_copy(HlcPager *pg, void *dst, const void *p, size_t n) {
  if (pg && n) pg->copy(pg, dst, p, n);
  else if (n) memcpy(dst, p, n);
}
#endif

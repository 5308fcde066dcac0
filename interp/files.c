/* files.c: reading and writing whole files with POSIX calls, and opening
 * an input file for decoding (HliFile). Nothing is printed: errors are
 * recorded on the context and name the file. */
#include "config.h"
#include "hlorun.h"
#include "interp/api.h"
#include "proto/proto.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static HloStatus read_bytes(HloCtx *ctx, const char *path, char **data, size_t *len) {
  *data = NULL;
  *len = 0;
  bool is_stdin = strcmp(path, "-") == 0;
  int fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return hli_api_fail(ctx, HLO_IO_ERROR, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0, expect = 0;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    cap = (expect = (size_t)st.st_size) + 1;
  char *buf = malloc(cap);
  if (!buf) { if (!is_stdin) close(fd); return hli_api_fail(ctx, HLO_NOMEM, "%s: out of memory", path); }
  for (;;) {
    if (n == cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) { free(buf); if (!is_stdin) close(fd); return hli_api_fail(ctx, HLO_NOMEM, "%s: out of memory", path); }
      buf = nb;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      free(buf);
      if (!is_stdin) close(fd);
      return hli_api_fail(ctx, HLO_IO_ERROR, "%s: cannot read: %s", path, strerror(e));
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  if (!is_stdin) close(fd);
  if (expect && n < expect) {   /* it shrank while it was read */
    free(buf);
    return hli_api_fail(ctx, HLO_IO_ERROR, "%s: the file was truncated while it was being read "
                        "(changed by another process?)", path);
  }
  *data = buf;
  *len = n;
  return HLO_OK;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Write to PATH.tmpXXXXXX beside it, then rename: readers never see half a file. */
HloStatus hli_write_file(HloCtx *ctx, const char *path, const char *data, size_t len) {
  if (strcmp(path, "-") == 0)
    return write_all(1, data, len) == 0 ? HLO_OK
                                        : hli_api_fail(ctx, HLO_IO_ERROR, "cannot write standard output");
  size_t pl = strlen(path);
  char *tmp = malloc(pl + 16);
  if (!tmp) return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  snprintf(tmp, pl + 16, "%s.tmpXXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int e = errno;
    free(tmp);
    return hli_api_fail(ctx, HLO_IO_ERROR, "%s: cannot create: %s", path, strerror(e));
  }
  int rc = write_all(fd, data, len);
  int e = errno;
  fchmod(fd, 0644 & ~(mode_t)0);
  if (close(fd) != 0 && rc == 0) { rc = -1; e = errno; }
  if (rc == 0 && rename(tmp, path) != 0) { rc = -1; e = errno; }
  if (rc != 0) unlink(tmp);
  free(tmp);
  return rc == 0 ? HLO_OK : hli_api_fail(ctx, HLO_IO_ERROR, "%s: cannot write: %s", path, strerror(e));
}

/* A file's bytes; protocol-buffer text (.pbtxt) comes back in binary wire
 * format, so every reader below sees one form of each message. */
HloStatus hli_read_file(HloCtx *ctx, const char *path, char **data, size_t *len) {
  HloStatus st = read_bytes(ctx, path, data, len);
  if (st != HLO_OK || !hpb_text_message(*data, *len)) return st;
  char *bin;
  size_t n;
  int rc = hpb_text_to_binary(*data, *len, strcmp(path, "-") == 0 ? "<stdin>" : path, &ctx->diags, &bin, &n);
  free(*data);
  *data = NULL;
  *len = 0;
  if (rc != 0) return HLO_PARSE_ERROR;
  *data = bin;
  *len = n;
  return HLO_OK;
}

HliFileFormat hli_file_format(const char *data, size_t len) {
  if (len >= 6 && memcmp(data, "\x93NUMPY", 6) == 0) return HLI_FILE_NPY;
  if (len >= 4 && memcmp(data, "PK\x03\x04", 4) == 0) return HLI_FILE_NPZ;
  if (len >= 4 && memcmp(data, "PK\x05\x06", 4) == 0) return HLI_FILE_NPZ;   /* empty zip */
  return HLI_FILE_TEXT;
}

/* ---- Large files: an image read on demand ----------------------------------
 *
 * A large binary file (a snapshot with a multi-GB argument, a big .npy or
 * .npz) is not read whole before it is decoded, which would hold every
 * argument twice (the file's bytes and the value's buffer). It gets an
 * image: an anonymous private mapping of the file's size, of which only the
 * structure is read now, with pread: the first 4 KiB, and for a protocol
 * buffer every field key and length and every small field. The large
 * payloads are holes, read by the decoders through the image's pager
 * (common/pager.h) piece by piece into place just before they copy them
 * into the value, and given back (MADV_DONTNEED) after. Which
 * length-delimited fields are holes is found without knowing the message
 * types: one of at least HOLE_MIN bytes whose payload is not itself a
 * sequence of well-formed fields (packed elements, bytes) is a hole; one
 * whose payload is (a nested message) is walked the same way.
 *
 * A file that shrinks while it is read gives a short read: the missing
 * bytes stay zeros, the decoders run to their end within the original
 * length, and hli_file_done reports the truncation, naming the file,
 * instead of what they made of the zeros. No signal is involved: the
 * library installs no handler (SIGBUS or other) in the processes that
 * embed it. */
enum {
  PAGED_MIN = 1 << 20,    /* smaller files are read whole */
  HEAD = 4096,            /* always read: format sniffing looks here */
  HOLE_MIN = 1 << 20,     /* the smallest payload left to read on demand */
};

/* pread all of [off, off + n) into dst; a short file leaves zeros and marks f. */
static void read_at(HliFile *f, char *dst, size_t n, uint64_t off) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(f->fd, dst + got, n - got, (off_t)(off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && !f->read_errno) f->read_errno = errno;
    if (r <= 0) break;
    got += (size_t)r;
  }
  if (got < n) {
    memset(dst + got, 0, n - got);
    f->short_read = true;
  }
}

/* The first hole that ends after off. */
static size_t hole_at(const HliFile *f, uint64_t off) {
  size_t lo = 0, hi = f->nholes;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (f->holes[mid].off + f->holes[mid].len <= off) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void pager_need(HlcPager *pg, const void *p, size_t n) {
  HliFile *f = (HliFile *)((char *)pg - offsetof(HliFile, pager));
  uint64_t a = (uint64_t)((const char *)p - f->data), b = a + n;
  for (size_t i = hole_at(f, a); i < f->nholes && f->holes[i].off < b; i++) {
    uint64_t ha = f->holes[i].off, hb = ha + f->holes[i].len;
    uint64_t x = a > ha ? a : ha, y = b < hb ? b : hb;
    read_at(f, f->data + x, (size_t)(y - x), x);
  }
}

static void pager_done(HlcPager *pg, const void *p, size_t n) {
  HliFile *f = (HliFile *)((char *)pg - offsetof(HliFile, pager));
  uint64_t a = (uint64_t)((const char *)p - f->data), b = a + n, page = (uint64_t)sysconf(_SC_PAGESIZE);
  for (size_t i = hole_at(f, a); i < f->nholes && f->holes[i].off < b; i++) {
    uint64_t ha = f->holes[i].off, hb = ha + f->holes[i].len;
    /* Whole pages inside the hole only: the pages around it hold structure. */
    uint64_t x = ((a > ha ? a : ha) + page - 1) / page * page, y = (b < hb ? b : hb) / page * page;
    if (y > x) (void)madvise(f->data + x, (size_t)(y - x), MADV_DONTNEED);
  }
}

static void pager_copy(HlcPager *pg, void *dst, const void *p, size_t n) {
  HliFile *f = (HliFile *)((char *)pg - offsetof(HliFile, pager));
  uint64_t a = (uint64_t)((const char *)p - f->data), b = a + n;
  char *out = dst;
  for (size_t i = hole_at(f, a); a < b; i++) {
    /* Read bytes up to the next hole, then the hole's part from the file. */
    uint64_t ha = i < f->nholes ? f->holes[i].off : b, hb = i < f->nholes ? ha + f->holes[i].len : b;
    uint64_t x = ha < b ? (ha > a ? ha : a) : b;
    if (x > a) memcpy(out, f->data + a, (size_t)(x - a));
    out += x - a;
    a = x;
    uint64_t y = hb < b ? hb : b;
    if (y > a) read_at(f, out, (size_t)(y - a), a);
    out += y > a ? y - a : 0;
    a = y > a ? y : a;
  }
}

/* Finding the holes of a protocol buffer through a small window of the file. */
typedef struct Walk {
  HliFile *f;
  uint64_t size;
  unsigned char win[1 << 16];
  uint64_t woff;
  size_t wlen;
  bool nomem;
} Walk;

static int walk_byte(Walk *w, uint64_t off, unsigned char *b) {
  if (off < w->woff || off >= w->woff + w->wlen) {
    size_t n = w->size - off < sizeof w->win ? (size_t)(w->size - off) : sizeof w->win;
    read_at(w->f, (char *)w->win, n, off);
    w->woff = off;
    w->wlen = n;
  }
  *b = w->win[off - w->woff];
  return 0;
}

static int walk_varint(Walk *w, uint64_t *off, uint64_t end, uint64_t *v) {
  uint64_t r = 0;
  for (int s = 0; s < 64 && *off < end; s += 7) {
    unsigned char b;
    walk_byte(w, (*off)++, &b);
    r |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) { *v = r; return 0; }
  }
  return -1;
}

static int add_hole(Walk *w, uint64_t off, uint64_t len) {
  HliFile *f = w->f;
  if (f->nholes == f->capholes) {
    size_t cap = f->capholes ? 2 * f->capholes : 16;
    HliHole *h = realloc(f->holes, cap * sizeof *h);
    if (!h) { w->nomem = true; return -1; }
    f->holes = h;
    f->capholes = cap;
  }
  f->holes[f->nholes++] = (HliHole){off, len};
  return 0;
}

/* Is [off, end) a sequence of well-formed fields? 0 if so (its large
 * payloads that are not messages recorded as holes, in file order), else -1. */
static int walk_message(Walk *w, uint64_t off, uint64_t end, int depth) {
  while (off < end) {
    uint64_t key, v;
    if (walk_varint(w, &off, end, &key) != 0 || key >> 3 == 0 || key >> 3 > 0x1fffffff) return -1;
    switch (key & 7) {
    case 0: if (walk_varint(w, &off, end, &v) != 0) return -1; break;
    case 1: if (end - off < 8) return -1; off += 8; break;
    case 5: if (end - off < 4) return -1; off += 4; break;
    case 2:
      if (walk_varint(w, &off, end, &v) != 0 || v > end - off) return -1;
      if (v >= HOLE_MIN) {
        size_t mark = w->f->nholes;
        if (depth >= 64 || walk_message(w, off, off + v, depth + 1) != 0) {
          w->f->nholes = mark;
          if (w->nomem || add_hole(w, off, v) != 0) return -1;
        }
      }
      off += v;
      break;
    default: return -1;
    }
  }
  return 0;
}

/* Set up f->data as the image of the open file f->fd of size bytes: the
 * head read, the rest a hole (a .npy or .npz: their readers ask for what
 * they read) or, for a protocol buffer, all but its large payloads read.
 * -1 (nothing kept) if the file is not one of these; the caller reads it
 * whole instead. */
static int open_paged(HliFile *f, uint64_t size) {
  if (size > SIZE_MAX - 1) return -1;
  char head[HEAD];
  size_t hn = size < HEAD ? (size_t)size : HEAD;
  read_at(f, head, hn, 0);
  HliFileFormat fmt = hli_file_format(head, hn);
  if (fmt == HLI_FILE_TEXT && !hpb_looks_binary(head, hn)) return -1;
  f->holes = NULL;
  f->nholes = f->capholes = 0;
  if (fmt == HLI_FILE_TEXT) {   /* a protocol buffer, or binary that is not one */
    Walk *w = calloc(1, sizeof *w);
    if (!w) return -1;
    w->f = f;
    w->size = size;
    int rc = walk_message(w, 0, size, 0);
    bool nomem = w->nomem;
    free(w);
    if (rc != 0 || nomem || f->nholes == 0) { free(f->holes); f->holes = NULL; f->nholes = 0; return -1; }
  } else {
    HliHole *h = malloc(sizeof *h);
    if (!h) return -1;
    *h = (HliHole){0, size};
    f->holes = h;
    f->nholes = f->capholes = 1;
  }
  /* The head is always read (sniffing looks at it); holes start after it. */
  size_t k = 0;
  for (size_t i = 0; i < f->nholes; i++) {
    uint64_t a = f->holes[i].off, b = a + f->holes[i].len;
    if (a < HEAD) a = HEAD;
    if (b > a) f->holes[k++] = (HliHole){a, b - a};
  }
  f->nholes = k;
  void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) { free(f->holes); f->holes = NULL; f->nholes = 0; return -1; }
  f->data = p;
  f->len = f->maplen = (size_t)size;
  /* Everything between the holes, now. */
  uint64_t at = 0;
  for (size_t i = 0; i <= f->nholes; i++) {
    uint64_t to = i < f->nholes ? f->holes[i].off : size;
    if (to > at) read_at(f, f->data + at, (size_t)(to - at), at);
    if (i < f->nholes) at = f->holes[i].off + f->holes[i].len;
  }
  f->pager = (HlcPager){pager_need, pager_done, pager_copy};
  /* Bytes that are binary but no message this reader knows: read whole, so
   * that the messages about them see every byte. */
  if (fmt == HLI_FILE_TEXT && hpb_sniff(f->data, f->len) == HPB_NOT_PROTO) {
    munmap(f->data, f->maplen);
    free(f->holes);
    f->data = NULL;
    f->holes = NULL;
    f->len = f->maplen = f->nholes = 0;
    f->short_read = false;
    f->read_errno = 0;
    return -1;
  }
  return 0;
}

HloStatus hli_file_open(HloCtx *ctx, const char *path, HliFile *f) {
  memset(f, 0, sizeof *f);
  f->fd = -1;
  int fd = strcmp(path, "-") == 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= PAGED_MIN) {
    f->fd = fd;
    if (open_paged(f, (uint64_t)st.st_size) == 0) return HLO_OK;
    f->fd = -1;
  }
  if (fd >= 0) close(fd);
  return hli_read_file(ctx, path, &f->data, &f->len);
}

void hli_file_close(HliFile *f) {
  if (f->maplen) munmap(f->data, f->maplen);
  else free(f->data);
  if (f->fd >= 0) close(f->fd);
  free(f->holes);
  memset(f, 0, sizeof *f);
  f->fd = -1;
}

bool hli_file_truncated(const HliFile *f) { return f->short_read || f->read_errno; }

HloStatus hli_file_done(HloCtx *ctx, HliFile *f, const char *path, HloStatus st) {
  bool cut = f->short_read;
  int e = f->read_errno;
  hli_file_close(f);
  const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
  if (e) return hli_api_fail(ctx, HLO_IO_ERROR, "%s: cannot read: %s", name, strerror(e));
  if (!cut) return st;
  return hli_api_fail(ctx, HLO_IO_ERROR, "%s: the file was truncated while it was being read "
                      "(changed by another process?)", name);
}

HlcPager *hli_file_pager(HliFile *f) { return f->maplen ? &f->pager : NULL; }

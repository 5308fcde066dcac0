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
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static HloStatus read_bytes(HloCtx *ctx, const char *path, char **data, size_t *len) {
  *data = NULL;
  *len = 0;
  bool is_stdin = strcmp(path, "-") == 0;
  int fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return hli_api_fail(ctx, HLO_IO_ERROR, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) cap = (size_t)st.st_size + 1;
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

/* ---- Files shrinking while mapped -------------------------------------------
 *
 * A file mapped by hli_file_open may be truncated by another process while
 * it is mapped; reading a page past its new end then raises SIGBUS. Rather
 * than crash, hlorun reports it (exit 2, naming the file). The mappings in
 * use are registered here, and a process-wide SIGBUS handler (installed on
 * the first mapping, chained to the handler it replaces) serves a fault
 * inside one of them by mapping a zero-filled page over the faulting page
 * and marking the mapping truncated, then returns: the read is retried and
 * sees zeros, the decoder runs to its end within the original length (every
 * bound it checks is that length, so zeros cannot make it read further) and
 * hli_file_done reports the truncation instead of whatever the decoder made
 * of the zeros. There is no siglongjmp out of the decoder, so nothing is
 * left half-built or leaked, and other threads are not disturbed; the
 * handler uses only lock-free atomics and mmap (a plain system call on
 * Linux, though not in POSIX's list of async-signal-safe functions). A
 * fault outside every registered mapping goes to the previous handler (by
 * default: the process dies of SIGBUS, as it would have). When all slots
 * are in use the file is read instead of mapped. */
enum { MAP_SLOTS = 64 };
typedef struct MapSlot {
  _Atomic uintptr_t base;   /* 0: free */
  _Atomic size_t len;
  _Atomic int taken, hit;
} MapSlot;
static MapSlot map_slots[MAP_SLOTS];
static struct sigaction sigbus_prev;
static uintptr_t map_page;
static pthread_once_t sigbus_once = PTHREAD_ONCE_INIT;
static _Atomic int sigbus_ready;

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
  uintptr_t a = (uintptr_t)si->si_addr;
  for (int i = 0; i < MAP_SLOTS; i++) {
    uintptr_t b = atomic_load(&map_slots[i].base);
    size_t n = atomic_load(&map_slots[i].len);
    if (b && a >= b && a - b < n) {
      void *pg = (void *)(a & ~(map_page - 1));
      if (mmap(pg, map_page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
        atomic_store(&map_slots[i].hit, 1);
        return;
      }
      break;
    }
  }
  if (sigbus_prev.sa_flags & SA_SIGINFO) {
    sigbus_prev.sa_sigaction(sig, si, uc);
  } else if (sigbus_prev.sa_handler != SIG_DFL && sigbus_prev.sa_handler != SIG_IGN) {
    sigbus_prev.sa_handler(sig);
  } else {
    sigaction(SIGBUS, &sigbus_prev, NULL);   /* the fault recurs on return and is fatal, as before */
  }
}

static void sigbus_install(void) {
  map_page = (uintptr_t)sysconf(_SC_PAGESIZE);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGBUS, &sa, &sigbus_prev) == 0) atomic_store(&sigbus_ready, 1);
}

/* A slot for a mapping, or -1 (then it is not to be kept mapped). */
static int map_register(const void *p, size_t n) {
  pthread_once(&sigbus_once, sigbus_install);
  if (!atomic_load(&sigbus_ready)) return -1;
  for (int i = 0; i < MAP_SLOTS; i++) {
    int free_ = 0;
    if (atomic_compare_exchange_strong(&map_slots[i].taken, &free_, 1)) {
      atomic_store(&map_slots[i].hit, 0);
      atomic_store(&map_slots[i].len, n);
      atomic_store(&map_slots[i].base, (uintptr_t)p);
      return i;
    }
  }
  return -1;
}

static void map_unregister(int i) {
  atomic_store(&map_slots[i].base, 0);
  atomic_store(&map_slots[i].len, 0);
  atomic_store(&map_slots[i].taken, 0);
}

HloStatus hli_file_open(HloCtx *ctx, const char *path, HliFile *f) {
  memset(f, 0, sizeof *f);
  int fd = strcmp(path, "-") == 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      (uint64_t)st.st_size <= SIZE_MAX) {
    size_t n = (size_t)st.st_size;
    void *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    int slot = p != MAP_FAILED ? map_register(p, n) : -1;   /* before the first read */
    if (p != MAP_FAILED && slot < 0) {
      munmap(p, n);
      p = MAP_FAILED;
    }
    /* Kept mapped only if it is a binary proto, a .npy or a .npz (never
     * text: the text readers may look one byte past the end, which a
     * mapping may not have). */
    if (p != MAP_FAILED && (hli_file_format(p, n) != HLI_FILE_TEXT || (hpb_looks_binary(p, n) && hpb_sniff(p, n) != HPB_NOT_PROTO))) {
      close(fd);
      f->data = p;
      f->len = f->maplen = n;
      f->slot = slot;
      return HLO_OK;
    }
    if (p != MAP_FAILED) {
      map_unregister(slot);
      munmap(p, n);
    }
  }
  if (fd >= 0) close(fd);
  return hli_read_file(ctx, path, &f->data, &f->len);
}

void hli_file_close(HliFile *f) {
  if (f->maplen) {
    map_unregister(f->slot);
    munmap(f->data, f->maplen);
  } else {
    free(f->data);
  }
  memset(f, 0, sizeof *f);
}

bool hli_file_truncated(const HliFile *f) {
  return f->maplen && atomic_load(&map_slots[f->slot].hit);
}

HloStatus hli_file_done(HloCtx *ctx, HliFile *f, const char *path, HloStatus st) {
  bool cut = hli_file_truncated(f);
  hli_file_close(f);
  if (!cut) return st;
  return hli_api_fail(ctx, HLO_IO_ERROR, "%s: the file was truncated while it was being read (changed by "
              "another process?)", strcmp(path, "-") == 0 ? "<stdin>" : path);
}

unsigned hli_file_flags(const HliFile *f) { return f->maplen ? HPB_READ_MAPPED : 0; }

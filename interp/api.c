/* api.c: the public API (include/hlorun.h) over the internal layers:
 * parser (modules), executor (plans, runs), value I/O (npy.c, literal_io.c)
 * and the custom-call registry (ffi/). Handles own their memory; errors are
 * recorded as diagnostics on the context and mapped to an HloStatus. Files
 * are read and written with POSIX calls; nothing is printed. */
#include "config.h"
#include "hlorun.h"
#include "interp/api.h"
#include "interp/plan.h"
#include "interp/valio.h"
#include "interp/isolate.h"
#include "interp/comm.h"
#include "parser/parser.h"
#include "proto/proto.h"
#include "ffi/ffi.h"
#include "hlorun/ffi.h"
#include "common/numeric.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void hlo_free(void *p) { free(p); }

/* ---- Context --------------------------------------------------------------- */

uint64_t hlo_default_max_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  uint64_t cap = (uint64_t)16 << 30;
  if (pages <= 0 || psz <= 0) return cap;
  uint64_t ram = (uint64_t)pages * (uint64_t)psz / 4 * 3;
  return ram < cap ? ram : cap;
}

HloStatus hli_ctx_create(const HloCtxOptions *opts, HloCtx **out) {
  if (!out) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  HloCtxOptions o = {sizeof o, 0, 0, 0, 0, 0, NULL};
  if (opts) {
    size_t n = opts->struct_size < sizeof o ? opts->struct_size : sizeof o;
    memcpy(&o, opts, n);
  }
  if (o.threads < 0 || !(o.custom_call_timeout >= 0)) return HLO_INVALID_ARGUMENT;
  HloCtx *c = calloc(1, sizeof *c);
  if (!c) return HLO_NOMEM;
  c->threads = o.threads ? o.threads : hli_cpu_count();
  c->max_memory = o.max_memory ? o.max_memory : hlo_default_max_memory();
  c->diags.max_errors = o.max_errors;
  c->ffi = hlf_registry_new();
  if (!c->ffi) { free(c); return HLO_NOMEM; }
  hlf_set_num_threads(c->ffi, c->threads);
  c->isolate = o.isolate_custom_calls != 0;
  c->cc_timeout = o.custom_call_timeout > 0 ? o.custom_call_timeout : 60;
  if (o.crash_dir && !(c->crash_dir = strdup(o.crash_dir))) { hlo_ctx_free(c); return HLO_NOMEM; }
  *out = c;
  return HLO_OK;
}

void hlo_ctx_free(HloCtx *ctx) {
  if (!ctx) return;
  hlf_registry_free(ctx->ffi);
  hli_pool_free(ctx->pool);
  hlc_diags_clear(&ctx->diags);
  free(ctx->diag_text);
  free(ctx->crash_dir);
  free(ctx);
}

const char *hlo_ctx_diagnostics(HloCtx *ctx) {
  if (!ctx) return "";
  HliBuf b = {0};
  hli_buf_puts(&b, "");
  for (int i = 0; i < ctx->diags.n; i++) hli_buf_puts(&b, ctx->diags.v[i].text);
  free(ctx->diag_text);
  ctx->diag_text = b.data;
  return ctx->diag_text ? ctx->diag_text : "";
}

int hlo_ctx_error_count(const HloCtx *ctx) { return ctx ? ctx->diags.nerrors : 0; }
int hlo_ctx_warning_count(const HloCtx *ctx) { return ctx ? ctx->diags.nwarnings : 0; }
void hlo_ctx_clear_diagnostics(HloCtx *ctx) { if (ctx) hlc_diags_clear(&ctx->diags); }
int hlo_ctx_threads(const HloCtx *ctx) { return ctx ? ctx->threads : 1; }

#define fail hli_api_fail
HloStatus hli_api_fail(HloCtx *ctx, HloStatus st, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (ctx) hlc_diag(&ctx->diags, HLC_ERROR, "%s", msg);
  return st;
}


/* Loading a library runs its constructors, and a plugin's registration
 * function is plugin code: with isolation on, both are first tried in a
 * worker process (isolate.c), so a library that crashes there is reported
 * instead of taking the process down. */
typedef struct LoadJob {
  HloCtx *ctx;
  const char *target, *lib, *symbol;   /* target NULL: a --plugin */
} LoadJob;

static int load_in_child(void *arg) {
  LoadJob *j = arg;
  HlcDiags d = {0};
  hlf_registry_after_fork(j->ctx->ffi);
  return j->target ? hlf_bind(j->ctx->ffi, j->target, j->lib, j->symbol, &d)
                   : hlf_load_plugin(j->ctx->ffi, j->lib, j->symbol, &d);
}

static HloStatus probe_load(HloCtx *ctx, const char *target, const char *lib, const char *symbol) {
  if (!ctx->isolate) return HLO_OK;
  LoadJob j = {ctx, target, lib, symbol};
  char *why = NULL;
  if (hli_isolated_probe(load_in_child, &j, ctx->cc_timeout, &why) >= 0) return HLO_OK;
  HloStatus st = fail(ctx, HLO_IO_ERROR, "%s %s: loading the library %s in an isolated worker "
                      "process", target ? "--custom-call" : "--plugin", target ? target : lib,
                      why ? why : "failed");
  free(why);
  return st;
}

HloStatus hlo_ctx_bind_custom_call(HloCtx *ctx, const char *target, const char *lib,
                                   const char *symbol) {
  if (!ctx || !target || !lib) return HLO_INVALID_ARGUMENT;
  if (probe_load(ctx, target, lib, symbol) != HLO_OK) return HLO_IO_ERROR;
  return hlf_bind(ctx->ffi, target, lib, symbol, &ctx->diags) ? HLO_IO_ERROR : HLO_OK;
}

HloStatus hlo_ctx_load_plugin(HloCtx *ctx, const char *lib, const char *function) {
  if (!ctx || !lib) return HLO_INVALID_ARGUMENT;
  if (probe_load(ctx, NULL, lib, function) != HLO_OK) return HLO_IO_ERROR;
  return hlf_load_plugin(ctx->ffi, lib, function, &ctx->diags) ? HLO_IO_ERROR : HLO_OK;
}

HloStatus hlo_ctx_register_ffi_handler(HloCtx *ctx, const char *target, HloFfiHandler *execute,
                                       const char *origin) {
  if (!ctx || !target || !*target || !execute) return HLO_INVALID_ARGUMENT;
  XLA_FFI_Handler_Bundle b = {.execute = (XLA_FFI_Handler *)execute};
  return hlf_register_handler(ctx->ffi, target, &b, origin) ? fail(ctx, HLO_NOMEM, "out of memory")
                                                          : HLO_OK;
}

char *hlo_ctx_custom_call_binding(HloCtx *ctx, const char *target) {
  return ctx && target ? hlf_binding_text(ctx->ffi, target) : NULL;
}

HloStatus hlo_ctx_set_instruction_members(HloCtx *ctx, const char *target, int on) {
  if (!ctx) return HLO_INVALID_ARGUMENT;
  return hlf_set_members_opt_in(ctx->ffi, target, on != 0) ? fail(ctx, HLO_NOMEM, "out of memory")
                                                           : HLO_OK;
}

HloStatus hlo_ctx_set_ffi_all_stages(HloCtx *ctx, int all) {
  if (!ctx) return HLO_INVALID_ARGUMENT;
  hlf_set_all_stages(ctx->ffi, all != 0);
  return HLO_OK;
}

/* ---- Files ------------------------------------------------------------------ */

static HloStatus read_bytes(HloCtx *ctx, const char *path, char **data, size_t *len) {
  *data = NULL;
  *len = 0;
  bool is_stdin = strcmp(path, "-") == 0;
  int fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(ctx, HLO_IO_ERROR, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) cap = (size_t)st.st_size + 1;
  char *buf = malloc(cap);
  if (!buf) { if (!is_stdin) close(fd); return fail(ctx, HLO_NOMEM, "%s: out of memory", path); }
  for (;;) {
    if (n == cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) { free(buf); if (!is_stdin) close(fd); return fail(ctx, HLO_NOMEM, "%s: out of memory", path); }
      buf = nb;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      free(buf);
      if (!is_stdin) close(fd);
      return fail(ctx, HLO_IO_ERROR, "%s: cannot read: %s", path, strerror(e));
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
static HloStatus write_file(HloCtx *ctx, const char *path, const char *data, size_t len) {
  if (strcmp(path, "-") == 0)
    return write_all(1, data, len) == 0 ? HLO_OK
                                        : fail(ctx, HLO_IO_ERROR, "cannot write standard output");
  size_t pl = strlen(path);
  char *tmp = malloc(pl + 16);
  if (!tmp) return fail(ctx, HLO_NOMEM, "out of memory");
  snprintf(tmp, pl + 16, "%s.tmpXXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int e = errno;
    free(tmp);
    return fail(ctx, HLO_IO_ERROR, "%s: cannot create: %s", path, strerror(e));
  }
  int rc = write_all(fd, data, len);
  int e = errno;
  fchmod(fd, 0644 & ~(mode_t)0);
  if (close(fd) != 0 && rc == 0) { rc = -1; e = errno; }
  if (rc == 0 && rename(tmp, path) != 0) { rc = -1; e = errno; }
  if (rc != 0) unlink(tmp);
  free(tmp);
  return rc == 0 ? HLO_OK : fail(ctx, HLO_IO_ERROR, "%s: cannot write: %s", path, strerror(e));
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

typedef enum { FMT_NPY, FMT_NPZ, FMT_TEXT } FileFmt;

static FileFmt sniff(const char *data, size_t len) {
  if (len >= 6 && memcmp(data, "\x93NUMPY", 6) == 0) return FMT_NPY;
  if (len >= 4 && memcmp(data, "PK\x03\x04", 4) == 0) return FMT_NPZ;
  if (len >= 4 && memcmp(data, "PK\x05\x06", 4) == 0) return FMT_NPZ;   /* empty zip */
  return FMT_TEXT;
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
    if (p != MAP_FAILED && (sniff(p, n) != FMT_TEXT || (hpb_looks_binary(p, n) && hpb_sniff(p, n) != HPB_NOT_PROTO))) {
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
  return fail(ctx, HLO_IO_ERROR, "%s: the file was truncated while it was being read (changed by "
              "another process?)", strcmp(path, "-") == 0 ? "<stdin>" : path);
}

unsigned hli_file_flags(const HliFile *f) { return f->maplen ? HPB_READ_MAPPED : 0; }

/* ---- Modules ---------------------------------------------------------------- */

HloStatus hlo_module_parse(HloCtx *ctx, const char *text, size_t len, const char *filename,
                           HloModule **out) {
  if (!ctx || !text || !out) return HLO_INVALID_ARGUMENT;
  HpbKind kind = hpb_sniff(text, len);
  if (kind == HPB_NOT_PROTO && hpb_looks_binary(text, len)) {
    char why[256];
    hpb_wire_explain(text, len, why, sizeof why);
    *out = NULL;
    return fail(ctx, HLO_PARSE_ERROR, "%s: neither HLO text nor a well-formed protocol buffer: %s",
                filename ? filename : "<input>", why);
  }
  *out = kind != HPB_NOT_PROTO && kind != HPB_LITERAL
             ? hpb_parse_module(text, len, filename ? filename : "<input>", &ctx->diags)
             : hlp_parse(text, len, filename ? filename : "<input>", &ctx->diags);
  if (!*out) {
    if (ctx->diags.nerrors == 0) fail(ctx, HLO_PARSE_ERROR, "%s: cannot parse", filename);
    return HLO_PARSE_ERROR;
  }
  if (!(*out)->entry) {
    hlp_module_free(*out);
    *out = NULL;
    return fail(ctx, HLO_PARSE_ERROR, "%s: the module has no ENTRY computation", filename);
  }
  return HLO_OK;
}

HloStatus hlo_module_load(HloCtx *ctx, const char *path, HloModule **out) {
  if (!ctx || !path || !out) return HLO_INVALID_ARGUMENT;
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);   /* a snapshot's arguments are not read */
  if (st != HLO_OK) return st;
  st = hlo_module_parse(ctx, f.data, f.len, strcmp(path, "-") == 0 ? "<stdin>" : path, out);
  st = hli_file_done(ctx, &f, path, st);
  if (st != HLO_OK && *out) { hlp_module_free(*out); *out = NULL; }
  return st;
}

void hlo_module_free(HloModule *m) { if (m) hlp_module_free(m); }

HloStatus hlo_module_verify(HloCtx *ctx, const HloModule *m) {
  if (!ctx || !m) return HLO_INVALID_ARGUMENT;
  return hlp_verify(m, &ctx->diags) == 0 ? HLO_OK : HLO_PARSE_ERROR;
}

HloStatus hlo_module_verify_warn(HloCtx *ctx, const HloModule *m, int *problems) {
  if (!ctx || !m) return HLO_INVALID_ARGUMENT;
  HlcDiags d = {0};
  hlp_verify(m, &d);
  if (problems) *problems = d.nerrors;
  hlc_diags_move_as_warnings(&ctx->diags, &d);
  return HLO_OK;
}

HloStatus hlo_module_print(HloCtx *ctx, const HloModule *m, char **text, size_t *len) {
  if (!ctx || !m || !text) return HLO_INVALID_ARGUMENT;
  *text = hlp_print(m, len);
  return *text ? HLO_OK : fail(ctx, HLO_NOMEM, "out of memory printing the module");
}

HloStatus hlo_module_to_proto(HloCtx *ctx, const HloModule *m, void **bytes, size_t *len) {
  if (!ctx || !m || !bytes || !len) return HLO_INVALID_ARGUMENT;
  char err[600], note[600];
  uint8_t *out = NULL;
  if (hpb_write_module(m, &out, len, err, sizeof err, note, sizeof note) != 0)
    return fail(ctx, HLO_INVALID_ARGUMENT, "cannot write the module as xla.HloModuleProto: %s", err);
  if (note[0])
    hlc_diag(&ctx->diags, HLC_WARNING, "xla.HloModuleProto has no field for %s (XLA keeps them in "
             "HloModuleConfig): the proto leaves them out", note);
  *bytes = out;
  return HLO_OK;
}

int hlo_module_num_params(const HloModule *m) { return m && m->entry ? m->entry->nparams : 0; }

static const HloShape *param_shape(const HloModule *m, int index) {
  if (!m || !m->entry) return NULL;
  if (index == -1) return m->entry->root ? &m->entry->root->shape : NULL;
  if (index < 0 || index >= m->entry->nparams || !m->entry->params[index]) return NULL;
  return &m->entry->params[index]->shape;
}

HloStatus hlo_module_param_shape(HloCtx *ctx, const HloModule *m, int index, char **text) {
  const HloShape *s = param_shape(m, index);
  if (!s || !text) return fail(ctx, HLO_INVALID_ARGUMENT, "no parameter %d", index);
  HliBuf b = {0};
  hli_shape_text(s, &b);
  if (b.failed) { hli_buf_free(&b); return fail(ctx, HLO_NOMEM, "out of memory"); }
  *text = b.data;
  return HLO_OK;
}

int hlo_module_is_tuple(const HloModule *m, int index) {
  const HloShape *s = param_shape(m, index);
  return s && s->dtype == HLO_TUPLE;
}

HloStatus hlo_module_check_custom_calls(HloCtx *ctx, const HloModule *m) {
  if (!ctx || !m) return HLO_INVALID_ARGUMENT;
  return hlf_check_module(ctx->ffi, m, &ctx->diags) == 0 ? HLO_OK : HLO_ERROR;
}

HloStatus hlo_module_explain_custom_calls(HloCtx *ctx, const HloModule *m, char **text) {
  if (!ctx || !m || !text) return HLO_INVALID_ARGUMENT;
  *text = hlf_explain(ctx->ffi, m, &ctx->diags);
  return *text ? HLO_OK : fail(ctx, HLO_NOMEM, "out of memory");
}

/* ---- Buffers ---------------------------------------------------------------- */

/* A value tree over v's data whose shapes live in arena (v keeps the data). */
static HliValue *rehome(HliValue *v, const HloShape *s) {
  if (s->dtype == HLO_TUPLE) {
    HliValue **el = calloc((size_t)(s->ntuple ? s->ntuple : 1), sizeof *el);
    if (!el) return NULL;
    int32_t k = 0;
    for (; k < s->ntuple && k < v->ntuple; k++)
      if (!(el[k] = rehome(v->tuple[k], &s->tuple[k]))) break;
    HliValue *t = k == s->ntuple ? hli_value_tuple(NULL, s, el, k) : NULL;
    for (int32_t i = 0; i < k; i++) hli_value_unref(NULL, el[i]);
    free(el);
    return t;
  }
  if (!hlc_dtype_is_array(s->dtype)) return hli_value_new(NULL, s);
  return hli_value_view(NULL, v, s);
}

/* Wrap v (consumes the reference) in a buffer with its own copy of shape s. */
HloStatus hli_make_buffer(HloCtx *ctx, HliValue *v, const HloShape *s, HloBuffer **out) {
  *out = NULL;
  HloBuffer *b = calloc(1, sizeof *b);
  if (!b) { hli_value_unref(NULL, v); return fail(ctx, HLO_NOMEM, "out of memory"); }
  hlc_arena_init(&b->arena);
  HloShape *cs = hli_shape_clone(&b->arena, s);
  b->v = cs ? rehome(v, cs) : NULL;
  hli_value_unref(NULL, v);
  if (!b->v) {
    hlc_arena_free(&b->arena);
    free(b);
    return fail(ctx, HLO_NOMEM, "out of memory");
  }
  *out = b;
  return HLO_OK;
}

void hlo_buffer_free(HloBuffer *b) {
  if (!b) return;
  hli_value_unref(NULL, b->v);
  hlc_arena_free(&b->arena);
  free(b);
}

HloStatus hlo_buffer_new_array(HloCtx *ctx, HloElementType type, const int64_t *dims, int rank,
                               const void *data, HloBuffer **out) {
  if (!out || rank < 0 || (rank > 0 && !dims)) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  HloDtype t = hlc_dtype_from_xla_code((int)type);
  if ((int)t < 0 || !hlc_dtype_is_array(t))
    return fail(ctx, HLO_INVALID_ARGUMENT, "element type %d is not an array type", (int)type);
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0) return fail(ctx, HLO_INVALID_ARGUMENT, "negative dimension %lld", (long long)dims[i]);
  HloShape s = {.dtype = t, .rank = rank, .dims = (int64_t *)(uintptr_t)dims};
  HliValue *v = hli_value_zeros(NULL, &s);
  if (!v) return fail(ctx, HLO_NOMEM, "out of memory");
  if (data && v->nbytes) memcpy(v->data, data, v->nbytes);
  return hli_make_buffer(ctx, v, &s, out);
}

HloStatus hlo_buffer_new_tuple(HloCtx *ctx, HloBuffer *const *elems, int n, HloBuffer **out) {
  if (!out || n < 0 || (n > 0 && !elems)) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  HloShape *ts = calloc((size_t)(n ? n : 1), sizeof *ts);
  HliValue **vs = calloc((size_t)(n ? n : 1), sizeof *vs);
  if (!ts || !vs) { free(ts); free(vs); return fail(ctx, HLO_NOMEM, "out of memory"); }
  for (int i = 0; i < n; i++) {
    if (!elems[i]) { free(ts); free(vs); return HLO_INVALID_ARGUMENT; }
    ts[i] = *elems[i]->v->shape;
    vs[i] = elems[i]->v;
  }
  HloShape s = {.dtype = HLO_TUPLE, .ntuple = n, .tuple = ts};
  HliValue *t = hli_value_tuple(NULL, &s, vs, n);
  free(vs);
  HloStatus st = t ? hli_make_buffer(ctx, t, &s, out) : fail(ctx, HLO_NOMEM, "out of memory");
  free(ts);
  return st;
}

HloElementType hlo_buffer_type(const HloBuffer *b) {
  return b ? (HloElementType)hlc_dtype_xla_code(b->v->dtype) : HLO_TYPE_INVALID;
}
int hlo_buffer_rank(const HloBuffer *b) { return b ? b->v->rank : 0; }
const int64_t *hlo_buffer_dims(const HloBuffer *b) { return b ? b->v->dims : NULL; }
int64_t hlo_buffer_num_elements(const HloBuffer *b) { return b ? b->v->nelem : 0; }
const void *hlo_buffer_data(const HloBuffer *b) { return b ? b->v->data : NULL; }
size_t hlo_buffer_nbytes(const HloBuffer *b) { return b ? b->v->nbytes : 0; }
int hlo_buffer_tuple_size(const HloBuffer *b) { return b && b->v->dtype == HLO_TUPLE ? b->v->ntuple : 0; }

HloStatus hlo_buffer_tuple_element(HloCtx *ctx, const HloBuffer *b, int i, HloBuffer **out) {
  if (!b || !out || b->v->dtype != HLO_TUPLE || i < 0 || i >= b->v->ntuple)
    return fail(ctx, HLO_INVALID_ARGUMENT, "no tuple element %d", i);
  HliValue *e = hli_value_ref(b->v->tuple[i]);
  return hli_make_buffer(ctx, e, e->shape, out);
}

HloStatus hlo_buffer_shape_text(HloCtx *ctx, const HloBuffer *b, char **text) {
  if (!b || !text) return HLO_INVALID_ARGUMENT;
  HliBuf s = {0};
  hli_shape_text(b->v->shape, &s);
  if (s.failed) { hli_buf_free(&s); return fail(ctx, HLO_NOMEM, "out of memory"); }
  *text = s.data;
  return HLO_OK;
}

static const char *const too_large_msg =
    "the value has no elements but more than a million empty rows: too large to print as "
    "literal text (write it to .npy or .npz)";

HloStatus hlo_buffer_encode(HloCtx *ctx, const HloBuffer *b, const char *format, char **data,
                            size_t *len) {
  if (!ctx || !b || !format || !data || !len) return HLO_INVALID_ARGUMENT;
  *data = NULL;
  *len = 0;
  HliBuf out = {0};
  int rc;
  if (strcmp(format, "npy") == 0) {
    if (b->v->dtype == HLO_TUPLE)
      return fail(ctx, HLO_INVALID_ARGUMENT, "a tuple result cannot be written to .npy: use .npz");
    rc = hli_npy_write(b->v, &out, &ctx->diags);
  } else if (strcmp(format, "npz") == 0) {
    int32_t n;
    HliValue **leaves = hli_value_leaves(b->v, &n);
    if (!leaves) return fail(ctx, HLO_NOMEM, "out of memory");
    rc = hli_npz_write(leaves, n, &out, &ctx->diags);
    free(leaves);
  } else if (strcmp(format, "txt") == 0) {
    if (hli_literal_too_large(b->v))
      return fail(ctx, HLO_INVALID_ARGUMENT, "%s", too_large_msg);
    rc = hli_literal_write(b->v, &out);
    hli_buf_put(&out, "\n", 1);
    if (out.failed) rc = -1;
  } else {
    return fail(ctx, HLO_INVALID_ARGUMENT, "unknown output format '%s'", format);
  }
  if (rc != 0) {
    hli_buf_free(&out);
    if (ctx->diags.nerrors == 0) fail(ctx, HLO_NOMEM, "out of memory");
    return HLO_IO_ERROR;
  }
  if (!out.data) hli_buf_put(&out, "", 0);
  *data = out.data;
  *len = out.len;
  return HLO_OK;
}

HloStatus hlo_buffer_to_literal(HloCtx *ctx, const HloBuffer *b, char **text, size_t *len) {
  if (!ctx || !b || !text) return HLO_INVALID_ARGUMENT;
  HliBuf out = {0};
  if (hli_literal_too_large(b->v)) return fail(ctx, HLO_INVALID_ARGUMENT, "%s", too_large_msg);
  if (hli_literal_write(b->v, &out) != 0 || !out.data) {
    hli_buf_free(&out);
    return fail(ctx, HLO_NOMEM, "out of memory");
  }
  *text = out.data;
  if (len) *len = out.len;
  return HLO_OK;
}

static bool ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), k = strlen(suf);
  return n >= k && strcmp(s + n - k, suf) == 0;
}

HloStatus hlo_buffers_save_npz(HloCtx *ctx, const char *const *names, HloBuffer *const *bufs,
                               int n, const char *path) {
  if (!ctx || !names || (n > 0 && !bufs) || !path || n < 0) return HLO_INVALID_ARGUMENT;
  HliValue **v = malloc((size_t)(n ? n : 1) * sizeof *v);
  if (!v) return fail(ctx, HLO_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    v[i] = bufs[i]->v;
    if (v[i]->dtype == HLO_TUPLE || strlen(names[i]) > 27) {
      free(v);
      return fail(ctx, HLO_INVALID_ARGUMENT, "%s: member %s must be an array with a name of at "
                  "most 27 characters", path, names[i]);
    }
  }
  HliBuf b = {0};
  int rc = hli_npz_write_named(v, names, n, &b, &ctx->diags);
  free(v);
  HloStatus st = rc == 0 ? write_file(ctx, path, b.data, b.len) : HLO_IO_ERROR;
  hli_buf_free(&b);
  return st;
}

HloStatus hlo_load_like_member(HloCtx *ctx, const HloBuffer *like, const char *path,
                               const char *member, HloBuffer **out) {
  if (!ctx || !like || !path || !member || !out) return HLO_INVALID_ARGUMENT;
  char what[1024];
  snprintf(what, sizeof what, "%s[%s]", path, member);
  return hli_load_shaped(ctx, like->v->shape, path, member, what, out);
}

HloStatus hlo_buffer_save(HloCtx *ctx, const HloBuffer *b, const char *path) {
  if (!ctx || !b || !path) return HLO_INVALID_ARGUMENT;
  const char *fmt = ends_with(path, ".npy") ? "npy" : ends_with(path, ".npz") ? "npz" : "txt";
  char *data;
  size_t len;
  HloStatus st = hlo_buffer_encode(ctx, b, fmt, &data, &len);
  if (st != HLO_OK) return st;
  st = write_file(ctx, path, data, len);
  free(data);
  return st;
}

/* ---- Loading inputs ----------------------------------------------------------- */

/* Errors of value readers are type or shape mismatches unless they say otherwise. */
static HloStatus read_status(HloCtx *ctx, int before_errors) {
  for (int i = 0; i < ctx->diags.n; i++)
    if (i >= before_errors && ctx->diags.v[i].sev == HLC_ERROR &&
        (strstr(ctx->diags.v[i].message, "does not match") ||
         strstr(ctx->diags.v[i].message, "out of range")))
      return HLO_TYPE_MISMATCH;
  return HLO_IO_ERROR;
}

/* Read a value of shape want from a file's bytes. */
/* A .npz member (of hli_npz_open's) as a value of shape want. */
static HloStatus npz_member_value(HloCtx *ctx, const HliNpzMember *mm, const char *name,
                                  const HloShape *want, const char *what, bool drop, HliValue **out) {
  int before = ctx->diags.n;
  int rc = hli_npz_member_npy(mm, want, what, &ctx->diags, drop, out);
  if (rc == -2) return fail(ctx, HLO_IO_ERROR, "%s: member %s is not a .npy file (bad magic)", what, name);
  return rc == 0 ? HLO_OK : read_status(ctx, before);
}

static HloStatus decode_value(HloCtx *ctx, const char *data, size_t len, unsigned flags,
                              const HloShape *want, const char *what, HliValue **out) {
  int before = ctx->diags.n;
  *out = NULL;
  if (hpb_sniff(data, len) == HPB_LITERAL)
    return hli_value_from_proto(ctx, data, len, flags, want, what, out);
  FileFmt f = sniff(data, len);
  if (f == FMT_NPY) {
    if (want->dtype == HLO_TUPLE)
      return fail(ctx, HLO_TYPE_MISMATCH, "%s: a .npy file holds one array, but a tuple is "
                  "expected: pass a .npz of its leaves", what);
    return hli_npy_read_mapped(data, len, want, what, &ctx->diags, (flags & HPB_READ_MAPPED) != 0, out) == 0
               ? HLO_OK : read_status(ctx, before);
  }
  if (f == FMT_TEXT && hpb_looks_binary(data, len)) {
    /* Not text: most likely a LiteralProto cut short or corrupted. */
    char why[256];
    hpb_wire_explain(data, len, why, sizeof why);
    return fail(ctx, HLO_IO_ERROR, "%s: neither a literal nor a well-formed protocol buffer: %s", what, why);
  }
  if (f == FMT_TEXT)
    return hli_literal_read(data, len, want, NULL, what, &ctx->diags, out) == 0
               ? HLO_OK : read_status(ctx, before);
  /* .npz: the leaves of want, depth first, as arr_0, arr_1, ... */
  HliNpzMember *mem;
  int32_t nm;
  if (hli_npz_open(data, len, what, &ctx->diags, &mem, &nm) != 0) return HLO_IO_ERROR;
  bool drop = (flags & HPB_READ_MAPPED) != 0;
  if (want->dtype != HLO_TUPLE && nm == 1) {   /* one array: straight into its value */
    HloStatus st = npz_member_value(ctx, &mem[0], "arr_0", want, what, drop, out);
    hli_npz_members_free(mem, nm);
    return st;
  }
  int32_t nl;
  const HloShape **ls = hli_shape_leaves(want, &nl);
  HliValue *v = ls ? hli_value_new(NULL, want) : NULL;
  HliValue **lv = NULL;
  int32_t nlv = 0;
  HloStatus st = HLO_OK;
  if (!v || !(lv = hli_value_leaves(v, &nlv))) { st = fail(ctx, HLO_NOMEM, "out of memory"); goto done; }
  if (nm != nl) {
    st = fail(ctx, HLO_TYPE_MISMATCH, "%s: the .npz holds %d arrays, the expected %s has %d "
              "leaves", what, (int)nm, want->dtype == HLO_TUPLE ? "tuple" : "array", (int)nl);
    goto done;
  }
  for (int32_t i = 0; i < nl; i++) {
    char name[32], w2[512];
    snprintf(name, sizeof name, "arr_%d", (int)i);
    snprintf(w2, sizeof w2, "%s[%s]", what, name);
    const HliNpzMember *mm = hli_npz_find(mem, nm, name);
    if (!mm) { st = fail(ctx, HLO_IO_ERROR, "%s: no member %s.npy", what, name); goto done; }
    HliValue *leaf;
    /* Each leaf is read, then copied into the tuple's buffer: a tuple's
     * largest leaf is held twice for a moment. */
    if ((st = npz_member_value(ctx, mm, name, ls[i], w2, drop, &leaf)) != HLO_OK) goto done;
    hli_value_copy_into(lv[i], leaf);
    hli_value_unref(NULL, leaf);
  }
done:
  free(ls);
  free(lv);
  hli_npz_members_free(mem, nm);
  if (st == HLO_OK) *out = v;
  else hli_value_unref(NULL, v);
  return st;
}

HloStatus hlo_load_param(HloCtx *ctx, const HloModule *m, int index, const char *path,
                         HloBuffer **out) {
  if (!ctx || !m || !path || !out) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  const HloShape *want = param_shape(m, index);
  if (!want || index < 0) return fail(ctx, HLO_INVALID_ARGUMENT, "the module has no parameter %d", index);
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);
  if (st != HLO_OK) return st;
  char what[1024];
  snprintf(what, sizeof what, "input %d (%s, parameter %s)", index, path,
           m->entry->params[index]->name ? m->entry->params[index]->name : "?");
  HliValue *v;
  HloStatus ds = decode_value(ctx, f.data, f.len, hli_file_flags(&f), want, what, &v);
  if ((st = hli_file_done(ctx, &f, path, ds)) != HLO_OK) {
    if (ds == HLO_OK) hli_value_unref(NULL, v);
    return st;
  }
  return hli_make_buffer(ctx, v, want, out);
}

HloStatus hlo_load_params_npz(HloCtx *ctx, const HloModule *m, int first, const char *path,
                              HloBuffer **out, int *n) {
  if (!ctx || !m || !path || !out || !n) return HLO_INVALID_ARGUMENT;
  int cap = *n;
  *n = 0;
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);
  if (st != HLO_OK) return st;
  HliNpzMember *mem;
  int32_t nm;
  if (hli_npz_open(f.data, f.len, path, &ctx->diags, &mem, &nm) != 0) return hli_file_done(ctx, &f, path, HLO_IO_ERROR);
  int np = hlo_module_num_params(m);
  if (first + nm > np || nm > cap) {
    hli_npz_members_free(mem, nm);
    hli_file_close(&f);
    return fail(ctx, HLO_INVALID_ARGUMENT, "%s holds %d arrays but the module takes %d parameters "
                "(%d of them already given)", path, (int)nm, np, first);
  }
  for (int32_t i = 0; i < nm; i++) {
    char name[32], what[1024];
    snprintf(name, sizeof name, "arr_%d", (int)i);
    const HliNpzMember *mm = hli_npz_find(mem, nm, name);
    const HloShape *want = param_shape(m, first + i);
    snprintf(what, sizeof what, "input %d (%s[%s], parameter %s)", first + i, path, name,
             m->entry->params[first + i]->name);
    HliValue *v = NULL;
    if (!mm) st = fail(ctx, HLO_IO_ERROR, "%s: no member %s.npy", path, name);
    else if (want->dtype == HLO_TUPLE)
      st = fail(ctx, HLO_TYPE_MISMATCH, "%s: parameter %d is a tuple; pass it as its own .npz",
                what, first + i);
    else
      st = npz_member_value(ctx, mm, name, want, what, f.maplen != 0, &v);
    if (st == HLO_OK) st = hli_make_buffer(ctx, v, want, &out[i]);
    if (st != HLO_OK) {
      for (int32_t k = 0; k < i; k++) { hlo_buffer_free(out[k]); out[k] = NULL; }
      hli_npz_members_free(mem, nm);
      return hli_file_done(ctx, &f, path, st);
    }
  }
  hli_npz_members_free(mem, nm);
  if ((st = hli_file_done(ctx, &f, path, HLO_OK)) != HLO_OK) {
    for (int32_t k = 0; k < nm; k++) { hlo_buffer_free(out[k]); out[k] = NULL; }
    return st;
  }
  *n = nm;
  return HLO_OK;
}

static uint64_t shape_bytes(const HloShape *s);

HloStatus hli_load_shaped(HloCtx *ctx, const HloShape *want, const char *path, const char *member,
                          const char *what, HloBuffer **out) {
  *out = NULL;
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);
  if (st != HLO_OK) return st;
  HliValue *v = NULL;
  if (member) {   /* one member of a .npz, by name */
    HliNpzMember *mem;
    int32_t nm;
    if (hli_npz_open(f.data, f.len, path, &ctx->diags, &mem, &nm) != 0) return hli_file_done(ctx, &f, path, HLO_IO_ERROR);
    HliNpzMember *mm = (HliNpzMember *)(uintptr_t)hli_npz_find(mem, nm, member);
    int before = ctx->diags.n, rc;
    if (!mm) st = fail(ctx, HLO_IO_ERROR, "%s: no member %s.npy", what, member);
    else if (want->dtype != HLO_TUPLE &&
             (rc = hli_npz_member_npy(mm, want, what, &ctx->diags, f.maplen != 0, &v)) != -2)
      st = rc == 0 ? HLO_OK : read_status(ctx, before);   /* a .npy member: streamed */
    else if (hli_npz_member_bytes(mm, what, &ctx->diags) != 0) st = HLO_IO_ERROR;
    else st = decode_value(ctx, (const char *)mm->data, mm->len, 0, want, what, &v);
    hli_npz_members_free(mem, nm);
  } else {
    st = decode_value(ctx, f.data, f.len, hli_file_flags(&f), want, what, &v);
  }
  HloStatus ds = st;
  if ((st = hli_file_done(ctx, &f, path, ds)) != HLO_OK) {
    if (ds == HLO_OK) hli_value_unref(NULL, v);
    return st;
  }
  return hli_make_buffer(ctx, v, want, out);
}

HloStatus hli_random_shaped(HloCtx *ctx, const HloModule *m, int index, const HloShape *s,
                            uint64_t seed, HloBuffer **out) {
  uint64_t bytes = shape_bytes(s);
  if (ctx->max_memory && bytes > ctx->max_memory)
    return fail(ctx, HLO_NOMEM, "parameter %d (%s) needs %llu bytes, more than the memory limit "
                "of %llu bytes", index, m->entry->params[index]->name,
                (unsigned long long)bytes, (unsigned long long)ctx->max_memory);
  HliValue *v = hli_value_new(NULL, s);
  if (!v) return fail(ctx, HLO_NOMEM, "out of memory for parameter %d", index);
  hli_fill_random(v, seed * 0x2545f4914f6cdd1dull + (uint64_t)index * 0x9e3779b97f4a7c15ull + 1);
  return hli_make_buffer(ctx, v, s, out);
}

HloStatus hlo_load_like(HloCtx *ctx, const HloBuffer *like, const char *path, HloBuffer **out) {
  if (!ctx || !like || !path || !out) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);
  if (st != HLO_OK) return st;
  HliValue *v;
  /* --expect SNAPSHOT: the result the snapshot recorded. */
  HpbKind kind = hpb_sniff(f.data, f.len);
  st = kind == HPB_SNAPSHOT || kind == HPB_ITERATION || kind == HPB_RUN_LITERALS
           ? hli_value_from_proto(ctx, f.data, f.len, hli_file_flags(&f), like->v->shape, path, &v)
           : decode_value(ctx, f.data, f.len, hli_file_flags(&f), like->v->shape, path, &v);
  HloStatus ds = st;
  if ((st = hli_file_done(ctx, &f, path, ds)) != HLO_OK) {
    if (ds == HLO_OK) hli_value_unref(NULL, v);
    return st;
  }
  return hli_make_buffer(ctx, v, like->v->shape, out);
}

/* Bytes of the array leaves of s (saturating). */
static uint64_t shape_bytes(const HloShape *s) {
  if (s->dtype == HLO_TUPLE) {
    uint64_t t = 0;
    for (int32_t i = 0; i < s->ntuple; i++) {
      uint64_t b = shape_bytes(&s->tuple[i]);
      t = b > UINT64_MAX - t ? UINT64_MAX : t + b;
    }
    return t;
  }
  if (!hlc_dtype_is_array(s->dtype)) return 0;
  uint64_t n = hlc_dtype_size(s->dtype);
  for (int32_t i = 0; i < s->rank; i++) {
    uint64_t d = s->dims[i] < 0 ? 0 : (uint64_t)s->dims[i];
    n = d && n > UINT64_MAX / d ? UINT64_MAX : n * d;
  }
  return n;
}

HloStatus hlo_random_param(HloCtx *ctx, const HloModule *m, int index, uint64_t seed,
                           HloBuffer **out) {
  if (!ctx || !m || !out) return HLO_INVALID_ARGUMENT;
  const HloShape *s = param_shape(m, index);
  if (!s || index < 0) return fail(ctx, HLO_INVALID_ARGUMENT, "the module has no parameter %d", index);
  return hli_random_shaped(ctx, m, index, s, seed, out);
}

/* ---- Running ------------------------------------------------------------------ */

static HloStatus run_status(HloCtx *ctx, int before) {
  for (int i = before; i < ctx->diags.n; i++)
    if (ctx->diags.v[i].sev == HLC_ERROR) {
      const char *msg = ctx->diags.v[i].message;
      if (strstr(msg, "not supported")) return HLO_UNSUPPORTED;
      if (strstr(msg, "memory")) return HLO_NOMEM;
    }
  return HLO_RUNTIME_ERROR;
}

HloStatus hli_compile_device(HloCtx *ctx, const HloModule *m, const HloRunOptions *opts,
                             const HliDevice *dev, HloExecutable **out) {
  if (!ctx || !m || !out || !m->entry) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  /* Shape-check the whole module before planning: kernels may then trust
   * the declared shapes (their own checks stay as a second line). Once for
   * the devices of a run. */
  if ((!dev || (dev->replica == 0 && dev->partition == 0)) && hlp_verify(m, &ctx->diags) != 0)
    return HLO_PARSE_ERROR;
  HloRunOptions o = {.struct_size = sizeof o};
  if (opts) memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
  if (o.max_iterations < 0 || !(o.timeout >= 0))
    return fail(ctx, HLO_INVALID_ARGUMENT, "negative max_iterations or timeout");
  HloExecutable *e = calloc(1, sizeof *e);
  if (!e) return fail(ctx, HLO_NOMEM, "out of memory");
  e->ctx = ctx;
  e->m = m;
  hli_exec_init(&e->x, m, &ctx->diags);
  if (ctx->threads > 1 && !ctx->pool) ctx->pool = hli_pool_new(ctx->threads);
  e->x.pool = ctx->pool;
  e->x.nthreads = ctx->pool ? hli_pool_threads(ctx->pool) : 1;
  e->x.mem_limit = ctx->max_memory;
  e->x.ffi = ctx->ffi;   /* handlers live in the context's registry */
  e->x.random_constants = o.random_constants != 0;
  e->x.random_seed = o.seed;
  e->x.no_fusion = o.no_fusion != 0;
  e->x.rng_state ^= o.seed * 0x9e3779b97f4a7c15ull;
  e->x.max_iterations = o.max_iterations;   /* limits (limits.c, isolate.c) */
  e->timeout = e->x.timeout = o.timeout;
  e->x.isolate = ctx->isolate;
  e->x.cc_timeout = ctx->cc_timeout;
  e->x.crash_dir = ctx->crash_dir;
  e->x.device = dev;
  int before = ctx->diags.n;
  /* Custom calls first: their errors point into backend_config (a caret at
   * the bad attribute), which the plan-time check cannot do. */
  if (hlf_check_module(ctx->ffi, m, &ctx->diags) != 0) {
    hlo_executable_free(e);
    return HLO_ERROR;
  }
  if (hli_exec_prepare(&e->x, m->entry) != 0 || !(e->entry = hli_plan_get(&e->x, m->entry))) {
    HloStatus st = run_status(ctx, before);
    hlo_executable_free(e);
    return st;
  }
  *out = e;
  return HLO_OK;
}

void hlo_executable_free(HloExecutable *e) {
  if (!e) return;
  /* Call-site state of custom calls dies with the executable (a later module
   * may reuse the same addresses). */
  if (e->ctx && e->ctx->ffi && !e->x.device) hlf_release_module(e->ctx->ffi, e->m);
  if (e->devices) e->devices_free(e->devices);
  hli_exec_free(&e->x);
  hli_obs_free(e->obs);
  free(e);
}

uint64_t hlo_executable_peak_memory(const HloExecutable *e) { return e ? e->x.mem_peak : 0; }

HloStatus hlo_execute(HloExecutable *e, HloBuffer *const *inputs, int n, HloBuffer **result) {
  if (!e || !result || (n > 0 && !inputs)) return HLO_INVALID_ARGUMENT;
  *result = NULL;
  HloCtx *ctx = e->ctx;
  const HloComputation *c = e->m->entry;
  if (e->devices)
    return fail(ctx, HLO_INVALID_ARGUMENT, "the module runs on %d devices: run it with "
                "hlo_execute_devices", hlo_executable_num_devices(e));
  if (n != c->nparams)
    return fail(ctx, HLO_INVALID_ARGUMENT, "the ENTRY computation %s takes %d parameter%s, but "
                "%d input%s given", c->name, c->nparams, c->nparams == 1 ? "" : "s", n,
                n == 1 ? " was" : "s were");
  HliValue *stack_args[16] = {0};
  HliValue **args = n <= 16 ? stack_args : malloc((size_t)n * sizeof *args);
  if (!args) return fail(ctx, HLO_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    const HloShape *want = &c->params[i]->shape;
    if (!inputs[i] || !hlp_shape_compatible(inputs[i]->v->shape, want)) {
      HliBuf a = {0}, b = {0};
      if (inputs[i]) hli_shape_text(inputs[i]->v->shape, &a);
      hli_shape_text(want, &b);
      fail(ctx, HLO_TYPE_MISMATCH, "input %d has shape %s, but parameter %d (%s) is %s", i,
           a.data ? a.data : "(none)", i, c->params[i]->name, b.data ? b.data : "?");
      hli_buf_free(&a);
      hli_buf_free(&b);
      if (args != stack_args) free(args);
      return HLO_TYPE_MISMATCH;
    }
    args[i] = inputs[i]->v;
  }
  int before = ctx->diags.n;
  HliValue *res;
  hli_obs_reset(e->obs);
  e->x.deadline = e->timeout > 0 ? hli_now() + e->timeout : 0;
  e->x.cur = NULL;
  size_t held = e->x.mem_used;
  int rc = hli_plan_run(&e->x, e->entry, args, &res);
  /* The result now belongs to the caller, who frees it without the
   * executor: left counted, every run would add its result to the next
   * run's memory in use until the limit refuses a run that fits. */
  e->x.mem_used = held;
  if (args != stack_args) free(args);
  if (rc != 0) return hli_obs_stopped(e->obs) ? HLO_STOPPED : run_status(ctx, before);
  return hli_make_buffer(ctx, res, &c->root->shape, result);
}

/* A run's arguments as executor values: the inputs' shapes checked against
 * the ENTRY parameters. */
HloStatus hli_entry_args(HloCtx *ctx, const HloModule *m, HloBuffer *const *inputs, int n,
                         HliValue **args) {
  const HloComputation *c = m->entry;
  if (n != c->nparams)
    return fail(ctx, HLO_INVALID_ARGUMENT, "the ENTRY computation %s takes %d parameter%s, but "
                "%d input%s given", c->name, c->nparams, c->nparams == 1 ? "" : "s", n,
                n == 1 ? " was" : "s were");
  for (int i = 0; i < n; i++) {
    const HloShape *want = &c->params[i]->shape;
    if (!inputs[i] || !hlp_shape_compatible(inputs[i]->v->shape, want)) {
      HliBuf a = {0}, b = {0};
      if (inputs[i]) hli_shape_text(inputs[i]->v->shape, &a);
      hli_shape_text(want, &b);
      fail(ctx, HLO_TYPE_MISMATCH, "input %d has shape %s, but parameter %d (%s) is %s", i,
           a.data ? a.data : "(none)", i, c->params[i]->name, b.data ? b.data : "?");
      hli_buf_free(&a);
      hli_buf_free(&b);
      return HLO_TYPE_MISMATCH;
    }
    args[i] = inputs[i]->v;
  }
  return HLO_OK;
}

HloStatus hli_run_status(HloCtx *ctx, int before) { return run_status(ctx, before); }


/* isolate.c: crash-proof custom calls. With isolation on, each execution
 * of a custom call forks a worker process that runs the handler exactly as
 * the in-process path would (hlf_call: same call frame, attributes, API
 * table), so nothing a handler does can take hlorun down:
 *
 *   - operands: the child sees them through fork's copy-on-write pages (a
 *     handler that scribbles on its inputs changes only its own copy);
 *   - results: the result leaves point into a MAP_SHARED anonymous mapping
 *     made before the fork; the parent copies them out when the handler
 *     returned, so a crash halfway leaves the run's values untouched;
 *   - status: a header in the same mapping says whether the handler
 *     returned and carries its error message;
 *   - the parent waits for the child with a timeout (custom_call_timeout,
 *     or what is left of the run's --timeout) and kills it when it expires.
 *
 * A child that dies (signal), exits (the handler called exit), or hangs
 * fails the instruction with an error naming the target and what happened,
 * and the call's inputs are saved for replay in
 * CRASH_DIR/hlorun-crash-TARGET-PID/: one .npy (tuple operands: .npz) per
 * distinct operand, call.txt (target, api_version, backend_config, shapes)
 * and replay.hlo (a module running just this custom call).
 *
 * Plan-time steps that run plugin code (loading a library, the metadata
 * query) are first tried in a child too (hli_isolated_probe).
 *
 * Costs and limits: one fork per execution (~0.1-1 ms); state a handler
 * keeps in the process (its instantiate stage, globals) lives in the child
 * and dies with it, so instantiate runs on every execution. Memory the
 * handler allocates through XLA_FFI_DeviceMemory_Allocate counts against the
 * memory limit in the child (its copy of the executor's count, which holds
 * the parent's values and the result mapping), so an allocation over the
 * limit fails there as it would in process; it ends with the child. The
 * in-process path (custom_call.c) is unchanged when isolation is off.
 * Not here: handlers and call frames (ffi/), the custom-call kernel
 * (custom_call.c). */
#include "interp/isolate.h"
#include "interp/exec.h"
#include "interp/valio.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
/* Under valgrind, the parent's view of the shared mapping does not see the
 * child's writes (memcheck tracks each process alone): the parent copied
 * possibly-undefined result bytes in, so it marks what the child wrote as
 * defined. Without valgrind's header the request is a no-op. */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_MAKE_MEM_DEFINED
#define VALGRIND_MAKE_MEM_DEFINED(p, n) ((void)(p), (void)(n))
#endif

bool hli_isolating(HliExec *x) { return x && x->isolate; }

enum { MSG_MAX = 4096, LEAF_ALIGN = 64 };

/* The start of every shared mapping: what the child reports. */
typedef struct Shared {
  volatile int state;        /* 0: never returned; 1: returned ok; 2: returned an error */
  char msg[MSG_MAX];         /* state 2: the error message */
  volatile int nomem;        /* state 2: memory was refused (hli_ffi_call_failed) */
} Shared;

static size_t align_up(size_t n) { return (n + LEAF_ALIGN - 1) & ~(size_t)(LEAF_ALIGN - 1); }

/* ---- The worker process ------------------------------------------------- */

typedef struct Ending {
  bool timed_out;            /* killed after the time limit */
  int status;                /* waitpid status otherwise */
  bool fork_failed;
  int err;                   /* errno of a failed fork/pipe */
} Ending;

/* Wait for pid within limit seconds (<= 0: no limit). fd is the read end of
 * a pipe only the child holds open: it closes when the child ends, which
 * wakes us at once; a grandchild holding it just makes us poll. */
static void wait_child(pid_t pid, int fd, double limit, Ending *e) {
  double end = limit > 0 ? hli_now() + limit : 0;
  bool hup = false;
  for (;;) {
    int st;
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) { e->status = st; return; }
    if (w < 0 && errno != EINTR) { e->status = 0; return; }
    int slice = hup ? 2 : 100;
    if (end > 0) {
      double left = end - hli_now();
      if (left <= 0) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        e->timed_out = true;
        return;
      }
      if (left * 1000 < slice) slice = (int)(left * 1000) + 1;
    }
    struct pollfd p = {hup ? -1 : fd, POLLIN, 0};
    if (poll(&p, 1, slice) > 0 && (p.revents & (POLLHUP | POLLERR | POLLIN))) hup = true;
  }
}

/* Fork; the child runs body(arg, sh) and _exits; the parent waits. */
static void run_in_child(void (*body)(void *arg, Shared *sh), void *arg, Shared *sh,
                         double limit, Ending *e) {
  memset(e, 0, sizeof *e);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) { e->fork_failed = true; e->err = errno; return; }
  fflush(NULL);   /* buffered output must not be written twice (a handler calling exit) */
  pid_t pid = fork();
  if (pid < 0) {
    e->fork_failed = true;
    e->err = errno;
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    close(fds[0]);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);   /* never outlive hlorun */
#endif
    /* Die of a crash's own signal (a sanitizer runtime would catch it and
     * exit instead), so the parent can name it. */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) signal(fatal[i], SIG_DFL);
    body(arg, sh);
    _exit(0);   /* no atexit handlers, no stdio flush: the parent owns those */
  }
  close(fds[1]);
  wait_child(pid, fds[0], limit, e);
  close(fds[0]);
}

/* What happened to a child that did not return, as text (malloc'd). */
static char *describe(const Ending *e, const Shared *sh, double limit) {
  char buf[256];
  if (e->fork_failed)
    snprintf(buf, sizeof buf, "could not start a worker process: %s", strerror(e->err));
  else if (e->timed_out)
    snprintf(buf, sizeof buf, "did not finish within %g seconds and was killed "
             "(--custom-call-timeout)", limit);
  else if (WIFSIGNALED(e->status))
    snprintf(buf, sizeof buf, "crashed with signal %d (%s)", WTERMSIG(e->status),
             strsignal(WTERMSIG(e->status)));
  else if (WIFEXITED(e->status) && sh->state == 0)
    snprintf(buf, sizeof buf, "exited the process with status %d instead of returning",
             WEXITSTATUS(e->status));
  else
    snprintf(buf, sizeof buf, "ended abnormally (wait status %d)", e->status);
  return strdup(buf);
}

static Shared *map_shared(size_t n) {
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* ---- Probes (plan time) ------------------------------------------------- */

typedef struct Probe { int (*fn)(void *); void *arg; } Probe;

static void probe_body(void *arg, Shared *sh) {
  Probe *p = arg;
  sh->state = p->fn(p->arg) == 0 ? 1 : 2;
}

int hli_isolated_probe(int (*fn)(void *arg), void *arg, double timeout, char **why) {
  *why = NULL;
  Shared *sh = map_shared(sizeof *sh);
  if (!sh) { *why = strdup("cannot map shared memory for a worker process"); return -1; }
  Probe p = {fn, arg};
  Ending e;
  run_in_child(probe_body, &p, sh, timeout, &e);
  int rc = !e.fork_failed && !e.timed_out && sh->state ? (sh->state == 1 ? 0 : 1) : -1;
  if (rc < 0) *why = describe(&e, sh, timeout);
  munmap(sh, sizeof *sh);
  return rc;
}

/* ---- Saving the inputs of a failed call --------------------------------- */

static int write_whole(const char *dir, const char *name, const char *data, size_t len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  while (len) {
    ssize_t w = write(fd, data, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) { close(fd); return -1; }
    data += w;
    len -= (size_t)w;
  }
  return close(fd);
}

/* Index of the first operand that is the same instruction as operand i. */
static int32_t first_use(const HloInstr *ins, int32_t i) {
  for (int32_t k = 0; k < i; k++)
    if (ins->ops[k] == ins->ops[i]) return k;
  return i;
}

static const char *api_version_name(int v) {
  static const char *const names[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                      "API_VERSION_STATUS_RETURNING",
                                      "API_VERSION_STATUS_RETURNING_UNIFIED",
                                      "API_VERSION_TYPED_FFI"};
  return v >= 0 && v <= 4 ? names[v] : "?";
}

/* The source text of ins: from its line's start through the line where its
 * brackets balance (quoted strings skipped). */
static void instr_text(const HloModule *m, const HloInstr *ins, const char **start, size_t *len) {
  *start = NULL;
  *len = 0;
  if (!m || !m->source || ins->off >= m->source_len) return;
  const char *s = m->source, *end = s + m->source_len, *p = s + ins->off;
  while (p > s && p[-1] != '\n') p--;
  const char *q = p;
  int depth = 0;
  bool quoted = false;
  for (; q < end; q++) {
    char c = *q;
    if (quoted) {
      if (c == '\\' && q + 1 < end) q++;
      else if (c == '"') quoted = false;
    } else if (c == '"') quoted = true;
    else if (c == '(' || c == '{' || c == '[') depth++;
    else if ((c == ')' || c == '}' || c == ']') && depth > 0) depth--;
    else if (c == '\n' && depth == 0) break;
  }
  while (p < q && (*p == ' ' || *p == '\t')) p++;
  if (q - p >= 5 && memcmp(p, "ROOT ", 5) == 0) p += 5;
  *start = p;
  *len = (size_t)(q - p);
}

/* A module that runs just this custom call on parameters named like its
 * operands (so the instruction's own text can be reused verbatim). */
static void replay_module(const HloModule *m, const HloInstr *ins, HlcText *b) {
  const char *text;
  size_t len;
  instr_text(m, ins, &text, &len);
  if (!text) return;
  hlc_text_puts(b, "HloModule replay\n\nENTRY main {\n");
  int32_t np = 0;
  for (int32_t i = 0; i < ins->nops; i++) {
    if (first_use(ins, i) != i) continue;
    const HloInstr *op = ins->ops[i];
    if (op->shape.dtype == HLO_TOKEN) {
      hlc_text_printf(b, "  %s = token[] after-all()\n", op->name);
      continue;
    }
    HlcText s = {0};
    hlp_print_shape(&s, &op->shape, false);
    hlc_text_printf(b, "  %s = %s parameter(%d)\n", op->name, s.p ? s.p : "?", (int)np++);
    hlc_text_free(&s);
  }
  hlc_text_puts(b, "  ROOT ");
  hlc_text_put(b, text, len);
  hlc_text_puts(b, "\n}\n");
}

/* Make CRASH_DIR/hlorun-crash-TARGET-PID[-N]; the path, malloc'd, or NULL. */
static char *make_dir(const char *base, const char *target) {
  char safe[64];
  size_t k = 0;
  for (const char *c = target; *c && k + 1 < sizeof safe; c++)
    safe[k++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                               (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' || *c == '.'
                           ? *c : '_');
  safe[k] = 0;
  char path[4096];
  for (int n = 1; n < 1000; n++) {
    if (n == 1) snprintf(path, sizeof path, "%s/hlorun-crash-%s-%d", base, safe, (int)getpid());
    else snprintf(path, sizeof path, "%s/hlorun-crash-%s-%d-%d", base, safe, (int)getpid(), n);
    if (mkdir(path, 0755) == 0) return strdup(path);
    if (errno != EEXIST) return NULL;
  }
  return NULL;
}

/* Save the call's inputs; the directory (malloc'd), or NULL with *err. */
static char *save_inputs(HliExec *x, const HloInstr *ins, HliValue *const *in, const char *what,
                         char **err) {
  const HloModule *m = x->module;
  const char *target = ins->custom_call_target ? ins->custom_call_target : "";
  char *dir = make_dir(x->crash_dir ? x->crash_dir : ".", target);
  if (!dir) {
    *err = strdup(strerror(errno));
    return NULL;
  }
  HlcText info = {0};
  hlc_text_printf(&info, "target: %s\napi_version: %d (%s)\ninstruction: %s, line %d of %s\n"
                 "what happened: %s\n", target, (int)ins->api_version,
                 api_version_name((int)ins->api_version), ins->name ? ins->name : "?",
                 (int)ins->line, m && m->filename ? m->filename : "<input>", what);
  hlc_text_puts(&info, "backend_config: ");
  if (ins->backend_config) hlc_text_put(&info, ins->backend_config, ins->backend_config_len);
  hlc_text_puts(&info, "\n");
  int rc = 0;
  int32_t np = 0;
  HlcText args = {0};
  HlcDiags d = {0};
  for (int32_t i = 0; i < ins->nops && !rc; i++) {
    HlcText shape = {0}, data = {0};
    hlp_print_shape(&shape, in[i]->shape, false);
    hlc_text_puts(&shape, "");   /* never NULL below */
    int32_t f = first_use(ins, i);
    if (in[i]->dtype == HLO_TOKEN) {
      hlc_text_printf(&info, "operand %d: token (not saved)\n", (int)i);
    } else if (f != i) {
      hlc_text_printf(&info, "operand %d: %s, the same as operand %d\n", (int)i, shape.p,
                     (int)f);
    } else {
      char name[32];
      bool tuple = in[i]->dtype == HLO_TUPLE;
      snprintf(name, sizeof name, "in%d.%s", (int)np, tuple ? "npz" : "npy");
      if (tuple) {
        int32_t nl;
        HliValue **leaves = hli_value_leaves(in[i], &nl);
        rc = leaves ? hli_npz_write(leaves, nl, &data, &d) : -1;
        free(leaves);
      } else {
        rc = hli_npy_write(in[i], &data, &d);
      }
      if (!rc && !data.oom) rc = write_whole(dir, name, data.p ? data.p : "", data.n);
      else rc = -1;
      hlc_text_printf(&info, "operand %d: %s -> %s (parameter %d of replay.hlo)\n", (int)i,
                     shape.p, name, (int)np);
      hlc_text_printf(&args, " %s/%s", dir, name);
      np++;
    }
    hlc_text_free(&shape);
    hlc_text_free(&data);
  }
  HlcText rs = {0}, replay = {0};
  hlp_print_shape(&rs, &ins->shape, false);
  hlc_text_puts(&rs, "");
  hlc_text_printf(&info, "result: %s\nreplay: hlorun [the same --custom-call/--plugin options] "
                 "%s/replay.hlo%s\n", rs.p, dir, args.p ? args.p : "");
  replay_module(m, ins, &replay);
  if (!rc && replay.p) rc = write_whole(dir, "replay.hlo", replay.p, replay.n);
  if (!rc) rc = write_whole(dir, "call.txt", info.p ? info.p : "", info.n);
  if (rc) *err = strdup(strerror(errno));
  hlc_text_free(&rs);
  hlc_text_free(&replay);
  hlc_text_free(&info);
  hlc_text_free(&args);
  hlc_diags_clear(&d);
  return dir;
}

/* ---- Isolated execution ------------------------------------------------- */

typedef struct CallJob {
  HliExec *x;                /* the child's copy counts the handler's allocations */
  HlfRegistry *r;
  const HloModule *m;
  const HloInstr *ins;
  const HlfBuf *args;
  int32_t nargs;
  const HlfBuf *rets;        /* pointing into the shared mapping */
  int32_t nrets;
} CallJob;

static void call_body(void *arg, Shared *sh) {
  CallJob *j = arg;
  hlf_registry_after_fork(j->r);
  char *err = NULL;
  HlfMemHook mem = hli_ffi_mem_hook(j->x);
  j->x->ffi_mem_refused = false;
  int rc = hlf_call_hooked(j->r, j->m, j->ins, j->args, j->nargs, j->rets, j->nrets, &mem, &err);
  if (rc) snprintf(sh->msg, sizeof sh->msg, "%s", err ? err : "out of memory");
  sh->nomem = rc && (!err || j->x->ffi_mem_refused);
  free(err);
  sh->state = rc ? 2 : 1;
}

static size_t leaf_bytes(const HlfBuf *b) {
  if (b->dtype == HLO_TOKEN) return 0;
  size_t n = hlc_dtype_size(b->dtype);
  for (int32_t d = 0; d < b->rank; d++) n *= (size_t)b->dims[d];
  return n;
}

int hli_isolated_call(HliExec *x, HlfRegistry *r, const HloInstr *ins, HliValue *const *in,
                      const HlfBuf *bufs, int32_t nargs, int32_t nrets) {
  const char *target = ins->custom_call_target ? ins->custom_call_target : "";
  size_t total = align_up(sizeof(Shared));
  for (int32_t i = 0; i < nrets; i++) total += align_up(leaf_bytes(&bufs[nargs + i]));
  if (hli_mem_reserve(x, total)) return -1;
  Shared *sh = map_shared(total);
  HlfBuf *rets = calloc((size_t)nrets + 1, sizeof *rets);
  if (!sh || !rets) {
    if (sh) munmap(sh, total);
    free(rets);
    hli_mem_release(x, total);
    return hli_fail_nomem(x, ins, "cannot map %zu bytes of shared memory for the isolated custom "
                          "call", total);
  }
  /* Result leaves in the mapping, starting with the values' current bytes
   * (as the in-process handler would see them). */
  char *p = (char *)sh + align_up(sizeof(Shared));
  for (int32_t i = 0; i < nrets; i++) {
    const HlfBuf *o = &bufs[nargs + i];
    size_t n = leaf_bytes(o);
    rets[i] = *o;
    if (o->dtype != HLO_TOKEN) {
      rets[i].data = p;
      if (n) memcpy(p, o->data, n);
    }
    p += align_up(n);
  }
  /* The time limit: the custom-call timeout, or what is left of the run's. */
  double limit = x->cc_timeout > 0 ? x->cc_timeout : 60;
  bool run_deadline = false;
  if (x->deadline > 0) {
    double left = x->deadline - hli_now();
    if (left < limit) { limit = left > 0.001 ? left : 0.001; run_deadline = true; }
  }
  CallJob job = {x, r, x->module, ins, bufs, nargs, rets, nrets};
  Ending e;
  run_in_child(call_body, &job, sh, limit, &e);
  int rc = 0;
  if (!e.fork_failed && !e.timed_out && sh->state == 1) {
    for (int32_t i = 0; i < nrets; i++) {
      size_t n = leaf_bytes(&rets[i]);
      if (!n) continue;
      (void)VALGRIND_MAKE_MEM_DEFINED(rets[i].data, n);   /* the child wrote them */
      memcpy(bufs[nargs + i].data, rets[i].data, n);
    }
  } else if (!e.fork_failed && !e.timed_out && sh->state == 2) {
    sh->msg[MSG_MAX - 1] = 0;
    rc = sh->nomem ? hli_fail_nomem(x, ins, "%s", sh->msg) : hli_fail(x, ins, "%s", sh->msg);
  } else if (e.timed_out && run_deadline) {
    x->deadline = -1;
    rc = hli_fail(x, ins, "time limit of %g seconds exceeded (--timeout) while the custom call "
                  "to \"%s\" was running; its worker process was killed", x->timeout, target);
  } else if (e.fork_failed) {
    char *why = describe(&e, sh, limit);
    rc = hli_fail(x, ins, "custom call to \"%s\": %s", target, why ? why : "?");
    free(why);
  } else {
    char *why = describe(&e, sh, limit), *err = NULL;
    char *dir = save_inputs(x, ins, in, why ? why : "?", &err);
    if (dir && !err)
      rc = hli_fail(x, ins, "the handler of custom-call target \"%s\" %s in its isolated worker "
                    "process; its inputs are saved for replay in %s/", target, why ? why : "?", dir);
    else
      rc = hli_fail(x, ins, "the handler of custom-call target \"%s\" %s in its isolated worker "
                    "process (its inputs could not be saved%s%s%s: %s)", target, why ? why : "?",
                    dir ? " in " : "", dir ? dir : "", dir ? "/" : "", err ? err : "?");
    free(why);
    free(err);
    free(dir);
  }
  munmap(sh, total);
  free(rets);
  hli_mem_release(x, total);
  return rc;
}

/* reduce.c: --reduce CONDITION -o DIR, the command's side of the reducer.
 *
 * The library searches (hlo_module_reduce); this file is its predicate:
 * each candidate is written as a case directory in a private temporary
 * directory and this program is started on it again (or CMD, for
 * command=), so that a crash, a hang or an exit of the candidate is the
 * child's, bounded by --timeout. CONDITION decides from the child's exit
 * status and standard error:
 *   nan            --check-nan stops, at an instruction of the original's
 *                  stop opcode
 *   error[=REGEX]  exit 2 (and REGEX, POSIX extended, matches the message)
 *   crash          --isolate-custom-calls: an isolated call crashed or hung
 *   mismatch       exit 1 under --expect with the candidate's golden
 *                  (reduce_golden.c): --expect GOLDEN's, or with a
 *                  reference (REF, --reference-custom-call, f64) the
 *                  reference's values, worked out once before the search;
 *                  the search is then about the first divergence
 *   command=CMD    sh -c 'CMD "$1"' with the case directory: exit 0
 * The smallest case is written to DIR with a command file that reproduces
 * CONDITION.
 *
 * Not here: the search (interp/reduce.c), loading inputs (run.c). */
#include "cli.h"
#include "cli/reduce_golden.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { C_NAN, C_ERROR, C_CRASH, C_MISMATCH, C_COMMAND };

typedef struct Red {
  HloCtx *ctx;
  const Opts *o;
  int kind;
  const char *cmd;           /* command=CMD */
  regex_t re;
  bool has_re;
  char opcode[64];           /* nan: the original's stop opcode ("" until known) */
  char self[4096];
  char *tmp, *cand;          /* the private directory; the candidate case in it */
  Goldens gold;              /* mismatch: the goldens */
  char *golden;              /* mismatch: the current candidate's golden file */
  double timeout;            /* seconds per candidate */
  bool cannot_start;         /* command=: sh said 126/127 */
  bool tty;
  int last_size;
} Red;

/* ---- The candidate as a case directory ---- */

static int write_text(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "w");
  bool ok = f && fwrite(text, 1, len, f) == len;
  ok = f && fclose(f) == 0 && ok;
  if (!ok) fprintf(stderr, "%s: error: cannot write %s\n", prog, path);
  return ok ? 0 : -1;
}

/* module.hlo and in0.npy ... (.npz for tuples) into dir. */
static int write_case(HloCtx *ctx, const char *dir, const HloModule *m, HloBuffer *const *in,
                      int n) {
  char *text = NULL;
  size_t len = 0;
  if (hlo_module_print(ctx, m, &text, &len) != HLO_OK) {
    fail_with(ctx, "--reduce");
    return -1;
  }
  char *p = xprintf("%s/module.hlo", dir);
  int rc = write_text(p, text, len);
  free(p);
  hlo_free(text);
  for (int k = 0; rc == 0 && k < n; k++) {
    p = xprintf("%s/in%d.%s", dir, k, hlo_buffer_tuple_size(in[k]) > 0 ? "npz" : "npy");
    if (hlo_buffer_save(ctx, in[k], p) != HLO_OK) {
      fail_with(ctx, p);
      rc = -1;
    }
    free(p);
  }
  return rc;
}

static int copy_file(const char *from, const char *to) {
  FILE *f = fopen(from, "rb");
  if (!f) { fprintf(stderr, "%s: error: cannot read %s: %s\n", prog, from, strerror(errno)); return -1; }
  char buf[65536];
  size_t n;
  int rc = 0;
  FILE *g = fopen(to, "wb");
  while (g && (n = fread(buf, 1, sizeof buf, f)) > 0)
    if (fwrite(buf, 1, n, g) != n) rc = -1;
  if (!g || ferror(f) || fclose(g) != 0) rc = -1;
  fclose(f);
  if (rc) fprintf(stderr, "%s: error: cannot write %s\n", prog, to);
  return rc;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)st; (void)flag; (void)f;
  return remove(p);
}

/* ---- Running one candidate ---- */

/* Start argv with standard error into errfd, wait at most r->timeout (then
 * kill its process group). The wait status; -1 for a timeout. */
static int run_child(Red *r, char **argv, int errfd) {
  pid_t pid = fork();
  if (pid < 0) return -2;
  if (pid == 0) {
    setpgid(0, 0);
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) { dup2(nul, 0); dup2(nul, 1); }
    dup2(errfd, 2);
    execv(argv[0], argv);
    dprintf(2, "%s: cannot run %s: %s\n", prog, argv[0], strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  double end = now_ms() + r->timeout * 1000;
  int status;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) return status;
    if (w < 0 && errno != EINTR) return -2;
    if (now_ms() > end) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
}

static char *read_all(int fd) {
  off_t n = lseek(fd, 0, SEEK_END);
  char *s = xmalloc(n > 0 ? (size_t)n + 1 : 1);
  ssize_t got = n > 0 ? pread(fd, s, (size_t)n, 0) : 0;
  s[got > 0 ? got : 0] = 0;
  return s;
}

/* The command line of a candidate in r->cand with n inputs. */
static char **candidate_argv(Red *r, int n, int *count) {
  const Opts *o = r->o;
  char **v = xmalloc((size_t)(o->npass + n + 16) * sizeof *v);
  int k = 0;
  if (r->kind == C_COMMAND) {
    v[k++] = xprintf("/bin/sh");
    v[k++] = xprintf("-c");
    v[k++] = xprintf("%s \"$1\"", r->cmd);
    v[k++] = xprintf("sh");
    v[k++] = xprintf("%s", r->cand);
  } else {
    v[k++] = xprintf("%s", r->self);
    for (int i = 0; i < o->npass; i++) v[k++] = xprintf("%s", o->pass[i]);
    v[k++] = xprintf("--no-progress");
    if (r->kind == C_NAN) v[k++] = xprintf("--check-nan");
    if (r->kind == C_CRASH) {
      v[k++] = xprintf("--isolate-custom-calls");
      v[k++] = xprintf("--crash-dir=%s", r->tmp);
      if (o->cc_timeout > 0) v[k++] = xprintf("--custom-call-timeout=%g", o->cc_timeout);
    }
    if (r->kind == C_MISMATCH) {
      v[k++] = xprintf("--expect=%s", r->golden);
      if (o->rtol >= 0) v[k++] = xprintf("--rtol=%.17g", o->rtol);
      if (o->atol >= 0) v[k++] = xprintf("--atol=%.17g", o->atol);
    }
    if (o->max_iterations > 0) v[k++] = xprintf("--max-iterations=%lld", (long long)o->max_iterations);
    v[k++] = xprintf("--");
    v[k++] = xprintf("%s/module.hlo", r->cand);
    for (int i = 0; i < n; i++) {
      char *p = xprintf("%s/in%d.npy", r->cand, i);
      if (access(p, F_OK) != 0) { free(p); p = xprintf("%s/in%d.npz", r->cand, i); }
      v[k++] = p;
    }
  }
  v[k] = NULL;
  *count = k;
  return v;
}

/* Does the child's ending show the condition? */
static int judge(Red *r, int status, const char *err) {
  if (status == -1) return 0;   /* timed out: neither holds nor fails, it is not the bug */
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  switch (r->kind) {
  case C_COMMAND:
    if (code == 126 || code == 127) r->cannot_start = true;
    return code == 0;
  case C_MISMATCH: return code == 1;
  case C_CRASH:
    return code == 2 && (strstr(err, "crashed with signal") ||
                         strstr(err, "(--custom-call-timeout)"));
  case C_ERROR: return code == 2 && (!r->has_re || regexec(&r->re, err, 0, NULL, 0) == 0);
  default: break;
  }
  /* nan: "FILE:LINE: check-nan: NAME (OPCODE) produced ..." */
  const char *p = strstr(err, "check-nan: ");
  const char *q = p ? strstr(p, ") produced ") : NULL;
  const char *b = q ? q : NULL;
  while (b && b > p && *b != '(') b--;
  if (!q || !b || *b != '(' || q - b - 1 >= (long)sizeof r->opcode) return 0;
  char op[64];
  memcpy(op, b + 1, (size_t)(q - b - 1));
  op[q - b - 1] = 0;
  if (!r->opcode[0]) snprintf(r->opcode, sizeof r->opcode, "%s", op);   /* the original */
  return strcmp(op, r->opcode) == 0;
}

static int predicate(const HloModule *cand, HloBuffer *const *in, int n, void *user) {
  Red *r = user;
  nftw(r->cand, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  if (mkdir(r->cand, 0700) != 0 || write_case(r->ctx, r->cand, cand, in, n) != 0) return -1;
  if (r->kind == C_COMMAND && case_write_command(r->o, r->cand, NULL) != 0) return -1;
  if (r->kind == C_MISMATCH) {   /* no golden for its ROOT: not the mismatch */
    free(r->golden);
    if (!(r->golden = golden_for(r->ctx, &r->gold, cand, r->tmp, "golden", NULL, NULL))) return 0;
  }
  char *errp = xprintf("%s/stderr", r->tmp);
  int fd = open(errp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  free(errp);
  if (fd < 0) return -1;
  int argc;
  char **argv = candidate_argv(r, n, &argc);
  int status = run_child(r, argv, fd);
  for (int i = 0; i < argc; i++) free(argv[i]);
  free(argv);
  char *err = read_all(fd);
  close(fd);
  int ok = status == -2 ? -1 : judge(r, status, err);
  free(err);
  return ok;
}

static void progress(void *user, int tried, int size) {
  Red *r = user;
  if (r->tty) {
    fprintf(stderr, "\rreduce: %d candidates tried, smallest %d instructions ", tried, size);
  } else if (size != r->last_size) {
    fprintf(stderr, "reduce: %d candidates tried, smallest %d instructions\n", tried, size);
  }
  r->last_size = size;
}

/* ---- The option ---- */

static int parse_condition(Red *r, const char *c) {
  const Opts *o = r->o;
  if (!strcmp(c, "nan")) r->kind = C_NAN;
  else if (!strcmp(c, "crash")) r->kind = C_CRASH;
  else if (!strcmp(c, "mismatch")) r->kind = C_MISMATCH;
  else if (!strcmp(c, "error")) r->kind = C_ERROR;
  else if (!strncmp(c, "error=", 6)) {
    r->kind = C_ERROR;
    int e = regcomp(&r->re, c + 6, REG_EXTENDED | REG_NOSUB);
    if (e) {
      char msg[256];
      regerror(e, &r->re, msg, sizeof msg);
      fprintf(stderr, "%s: error: --reduce: bad REGEX '%s': %s\n", prog, c + 6, msg);
      return -1;
    }
    r->has_re = true;
  } else if (!strncmp(c, "command=", 8) && c[8]) {
    r->kind = C_COMMAND;
    r->cmd = c + 8;
  } else {
    fprintf(stderr, "%s: error: --reduce: unknown CONDITION '%s' (nan, error[=REGEX], crash, "
            "mismatch, command=CMD)\n", prog, c);
    return -1;
  }
  const char *need = r->kind == C_CRASH && !o->isolate ? "crash needs --isolate-custom-calls "
                                                         "(a crash must not end the reducer)"
                   : r->kind == C_MISMATCH && o->expect && (o->reference || o->nref_bind ||
                                                            o->ref_f64)
                       ? "mismatch compares with --expect or with --reference, not both"
                   : r->kind == C_MISMATCH && !o->expect && !o->reference && !o->nref_bind &&
                         !o->ref_f64
                       ? "mismatch needs --expect GOLDEN or --reference REF"
                   : !o->output ? "needs -o DIR (where the reduced case goes)" : NULL;
  if (need) { fprintf(stderr, "%s: error: --reduce %s\n", prog, need); return -1; }
  return 0;
}

/* DIR's command file: the line that shows the condition again. */
static int write_command(Red *r, const char *dir) {
  static const char *const opts[] = {"--check-nan", NULL, "--isolate-custom-calls", NULL};
  if (r->kind != C_COMMAND) return case_write_command(r->o, dir, opts[r->kind]);
  if (case_write_command(r->o, dir, NULL) != 0) return -1;
  char *p = xprintf("%s/command", dir);
  char *t = xprintf("# Reproduces the condition: sh %s/command (exit 0 while it holds)\n"
                    "%s \"$(dirname \"$0\")\"\n", dir, r->cmd);
  int rc = write_text(p, t, strlen(t));
  free(p);
  free(t);
  return rc;
}

static int finish(Red *r, HloReduceResult *res, double t0) {
  const char *dir = r->o->output;
  if (write_case(r->ctx, dir, res->module, res->inputs, res->ninputs) != 0) return EXIT_ERROR;
  int base = 1, kept = 0;
  if (r->kind == C_MISMATCH) {   /* the golden of the case's ROOT */
    char *g = golden_for(r->ctx, &r->gold, res->module, r->tmp, "golden", &base, &kept);
    const char *ext = g ? strrchr(g, '.') : NULL;
    char *p = xprintf("%s/expected%s", dir, ext && !strchr(ext, '/') ? ext : ".npy");
    int rc = g ? copy_file(g, p) : -1;
    if (!g) fprintf(stderr, "%s: error: --reduce: no golden for the case's ROOT\n", prog);
    free(p);
    free(g);
    if (rc != 0) return EXIT_ERROR;
  }
  if (write_command(r, dir) != 0) return EXIT_ERROR;
  fprintf(stderr, "reduce: %s: %d -> %d instructions, %d candidates tried, %.2f s; focus %s "
          "(run %lld)", r->o->module, res->before, res->after, res->tried,
          (now_ms() - t0) / 1000, res->focus, (long long)res->focus_run);
  const GoldenBase *b = &r->gold.b[base];
  if (r->kind == C_MISMATCH && base == 0)
    fprintf(stderr, ", the first divergence from the reference (its golden the reference's value)");
  else if (r->kind == C_MISMATCH && r->gold.found)
    fprintf(stderr, "; the first divergence %s alone does not keep the mismatch: ENTRY's ROOT "
            "stays", r->gold.b[0].name);
  if (r->kind == C_MISMATCH && b->nops > 0 && kept != b->nops)
    fprintf(stderr, "; %d of %s's %d outputs kept", kept, b->name, b->nops);
  fprintf(stderr, "; written to %s\n", dir);
  return EXIT_OK;
}

int reduce_run(HloCtx *ctx, const HloModule *m, const Opts *o, const char *argv0) {
  Red r = {.ctx = ctx, .o = o, .timeout = o->timeout > 0 ? o->timeout : 60,
           .tty = isatty(2) && o->progress != 0};
  double t0 = now_ms();
  if (parse_condition(&r, o->reduce) != 0) return EXIT_ERROR;
  int rc = EXIT_ERROR;
  int np = hlo_module_num_params(m);
  HloBuffer **in = calloc((size_t)np + 1, sizeof *in);
  HloReduceResult res;
  memset(&res, 0, sizeof res);
  ssize_t sl = readlink("/proc/self/exe", r.self, sizeof r.self - 1);
  if (sl > 0) r.self[sl] = 0;
  else snprintf(r.self, sizeof r.self, "%s", argv0);
  char tmpl[] = "/tmp/hlorun-reduce-XXXXXX";
  if (!in) { fprintf(stderr, "%s: out of memory\n", prog); goto out; }
  if (case_prepare_dir(o->output, o->force, "--reduce") != 0) goto out;
  if (!(r.tmp = mkdtemp(tmpl))) {
    fprintf(stderr, "%s: error: --reduce: cannot create a temporary directory: %s\n", prog,
            strerror(errno));
    goto out;
  }
  r.cand = xprintf("%s/case", r.tmp);
  if ((rc = load_module_inputs(ctx, m, o, in)) != EXIT_OK) goto out;
  rc = EXIT_ERROR;
  static const HloReduceFocus focus[] = {HLO_REDUCE_FOCUS_NAN, HLO_REDUCE_FOCUS_FAILURE,
                                         HLO_REDUCE_FOCUS_FAILURE, HLO_REDUCE_FOCUS_ROOT,
                                         HLO_REDUCE_FOCUS_ROOT};
  HloReduceOptions ro = {.struct_size = sizeof ro, .focus = focus[r.kind], .timeout = r.timeout,
                         .progress = progress};
  /* The reducer's own runs get a context whose isolated crashes save their
   * inputs in the private directory (not --crash-dir: it would fill up). */
  Opts quiet = *o;
  quiet.crash_dir = r.tmp;
  HloCtx *rctx = context_like(&quiet, o->threads, false);
  if (!rctx) goto out;
  r.ctx = rctx;
  if (r.kind == C_MISMATCH &&
      (o->expect ? goldens_expect(rctx, o, m, in, np, r.timeout, &r.gold)
                 : goldens_reference(rctx, o, m, in, np, r.timeout, r.tmp, &r.gold)) != 0) {
    hlo_ctx_free(rctx);
    goto out;
  }
  /* With a reference: the search starts at the first divergence. */
  if (r.gold.found) {
    ro.focus = HLO_REDUCE_FOCUS_NAMED;
    ro.focus_name = r.gold.b[0].name;
    ro.focus_run = r.gold.run;
  }
  HloStatus st = hlo_module_reduce(rctx, m, in, np, &ro, predicate, &r, &res);
  if (r.tty) fputc('\n', stderr);
  if (r.cannot_start && st != HLO_OK) {
    fprintf(stderr, "%s: error: --reduce: command=%s cannot start (sh: exit 126 or 127: not "
            "found or not executable)\n", prog, r.cmd);
  } else if (st != HLO_OK) {
    fail_with(rctx, "--reduce");
  } else {
    rc = finish(&r, &res, t0);
  }
  hlo_reduce_result_free(&res);
  hlo_ctx_free(rctx);
out:
  for (int i = 0; in && i < np; i++) hlo_buffer_free(in[i]);
  free(in);
  if (r.tmp) nftw(r.tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  free(r.cand);
  free(r.golden);
  goldens_free(&r.gold);
  if (r.has_re) regfree(&r.re);
  return rc;
}

/* suite.c: hlorun --suite DIR...: run every golden case under the given
 * directories (layout: casedir.c) and report.
 *
 * Each case runs in a child process (this program started again with the
 * case's module, inputs and --expect), so a crashing custom-call handler or
 * a runaway case costs only that case. Up to --jobs children run at once;
 * each gets a share of the cores as its --threads. A case that runs longer
 * than --timeout is killed. Output: one line per failing case, then
 * "N passed, N failed" (exit 0 only when none failed). --record rewrites the
 * golden file of each case whose output differs (temporary file + rename)
 * and names it; a case holding reference.hlo runs as --reference does and
 * its failure line carries the 'first divergence:' line; --junit FILE writes a JUnit XML report. On a terminal a
 * progress line shows how far the suite is.
 *
 * Not here: running a module (the child does), the case layout. */
#include "cli.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef enum { R_PENDING, R_PASS, R_FAIL, R_ERROR, R_RECORDED } Result;

typedef struct Job {
  Case *c;
  pid_t pid;                  /* 0 when not running */
  int errfd;                  /* the child's standard error (a temporary file) */
  double t0, secs;
  bool timed_out;
  char *record_tmp;           /* --record: where the child writes its output */
  char *record_dst;           /* the golden file it becomes */
  Result result;
  char *line;                 /* one-line reason (failures, records) */
  char *details;              /* the child's standard error */
} Job;

typedef struct Suite {
  const Opts *o;
  const char *self;           /* program to start */
  Job *jobs;
  int n, done, failed, running;
  bool tty;
  double t0, t_drawn;
  HloCtx *ctx;                /* --record: to learn whether results are tuples */
} Suite;

/* ---- Progress ---- */


/* Seconds a case may run before it is killed: --timeout, else 600. */
static double case_timeout(const Opts *o) { return o->timeout > 0 ? o->timeout : 600; }
static void progress_clear(Suite *s) {
  if (s->tty) fputs("\r\033[K", stderr);
}

static void progress_draw(Suite *s, bool force) {
  if (!s->tty) return;
  double t = now_ms();
  if (!force && t - s->t_drawn < 100) return;
  s->t_drawn = t;
  const char *cur = "";
  for (int i = 0; i < s->n; i++)
    if (s->jobs[i].pid) { cur = s->jobs[i].c->dir; break; }
  fprintf(stderr, "\r\033[K[%d/%d] %d failed  %.1fs  %.60s", s->done, s->n, s->failed,
          (t - s->t0) / 1000, cur);
  fflush(stderr);
}

/* ---- Starting a case ---- */

typedef struct Argv { char **v; int n, cap; } Argv;

static void arg(Argv *a, const char *s) {
  if (a->n + 2 > a->cap) {
    a->cap = a->cap ? 2 * a->cap : 32;
    a->v = realloc(a->v, (size_t)a->cap * sizeof *a->v);
    if (!a->v) { fprintf(stderr, "%s: out of memory\n", prog); exit(EXIT_ERROR); }
  }
  a->v[a->n++] = xprintf("%s", s);
  a->v[a->n] = NULL;
}

static void argv_free(Argv *a) {
  for (int i = 0; i < a->n; i++) free(a->v[i]);
  free(a->v);
}

static const char *ext_of(const char *path) {
  const char *dot = strrchr(path, '.');
  return dot ? dot + 1 : "txt";
}

/* --record without a golden file: .npz for a tuple result, else .npy. */
static const char *new_golden_ext(Suite *s, const Case *c) {
  HloModule *m = NULL;
  const char *ext = "npy";
  if (s->ctx && hlo_module_load(s->ctx, c->module, &m) == HLO_OK && hlo_module_is_tuple(m, -1))
    ext = "npz";
  hlo_module_free(m);
  hlo_ctx_clear_diagnostics(s->ctx);
  return ext;
}

static void build_argv(Suite *s, Job *j, Argv *a) {
  const Opts *o = s->o;
  Case *c = j->c;
  arg(a, s->self);
  for (int i = 0; i < o->npass; i++) arg(a, o->pass[i]);
  for (int i = 0; i < c->nargs; i++) arg(a, c->args[i]);
  if (!o->threads) {
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = o->jobs > 0 ? o->jobs : cores;
    int t = cores > jobs ? cores / jobs : 1;
    char *v = xprintf("--threads=%d", t < 1 ? 1 : t);
    arg(a, v);
    free(v);
  }
  double rtol = c->rtol >= 0 ? c->rtol : o->rtol, atol = c->atol >= 0 ? c->atol : o->atol;
  char num[64];
  if (rtol >= 0) { snprintf(num, sizeof num, "--rtol=%.17g", rtol); arg(a, num); }
  if (atol >= 0) { snprintf(num, sizeof num, "--atol=%.17g", atol); arg(a, num); }
  if (c->expected) { arg(a, "--expect"); arg(a, c->expected); }
  if (c->reference) { arg(a, "--reference"); arg(a, c->reference); }
  /* A case checked by its reference alone has no golden file to record. */
  if (o->record && (c->expected || !c->reference)) {
    const char *ext = c->expected ? ext_of(c->expected) : new_golden_ext(s, c);
    j->record_dst = xprintf("%s/expected.%s", c->dir, ext);
    j->record_tmp = xprintf("%s/.expected.record-%ld.%s", c->dir, (long)getpid(), ext);
    arg(a, "-o");
    arg(a, j->record_tmp);
  }
  arg(a, "--");
  arg(a, c->module);
  for (int i = 0; i < c->ninputs; i++) arg(a, c->inputs[i]);
}

static int start(Suite *s, Job *j) {
  char tmpl[] = "/tmp/hlorun-suite-XXXXXX";
  j->errfd = mkostemp(tmpl, O_CLOEXEC);   /* other children must not inherit it */
  if (j->errfd < 0) {
    fprintf(stderr, "%s: cannot create a temporary file: %s\n", prog, strerror(errno));
    return -1;
  }
  unlink(tmpl);
  Argv a = {0};
  build_argv(s, j, &a);
  j->t0 = now_ms();
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "%s: cannot start a case: %s\n", prog, strerror(errno));
    argv_free(&a);
    close(j->errfd);
    return -1;
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) { dup2(nul, 0); dup2(nul, 1); }
    dup2(j->errfd, 2);
    execv(a.v[0], a.v);
    execvp(a.v[0], a.v);
    dprintf(2, "%s: cannot run %s: %s\n", prog, a.v[0], strerror(errno));
    _exit(127);
  }
  argv_free(&a);
  j->pid = pid;
  s->running++;
  return 0;
}

/* ---- Finishing a case ---- */

static char *read_fd(int fd) {
  off_t end = lseek(fd, 0, SEEK_END);
  if (end < 0) end = 0;
  size_t n = (size_t)end;
  char *b = xmalloc(n + 1);
  size_t got = 0;
  if (lseek(fd, 0, SEEK_SET) == 0)
    while (got < n) {
      ssize_t r = read(fd, b + got, n - got);
      if (r <= 0) break;
      got += (size_t)r;
    }
  b[got] = 0;
  return b;
}

/* The first line holding needle (or the first non-empty line), without
 * the "FILE: " prefix the mismatch report starts with. */
static char *first_line(const char *text, const char *needle) {
  const char *p = needle ? strstr(text, needle) : NULL;
  if (p) while (p > text && p[-1] != '\n') p--;
  if (!p) {
    p = text;
    while (*p == '\n') p++;
  }
  const char *e = strchr(p, '\n');
  return xprintf("%.*s", (int)(e ? e - p : (ptrdiff_t)strlen(p)), p);
}

/* "mismatch: ..." with the first differing element appended. */
static char *mismatch_line(const char *err) {
  const char *m = strstr(err, "mismatch:");
  if (!m) return first_line(err, NULL);
  const char *e = strchr(m, '\n');
  char *head = xprintf("%.*s", (int)(e ? e - m : (ptrdiff_t)strlen(m)), m);
  const char *at = strstr(m, "\n  at ");
  if (!at) return head;
  char *line = first_line(at + 1, NULL);
  char *t = line;
  while (*t == ' ') t++;
  char *r = xprintf("%s; %s", head, t);
  free(head);
  free(line);
  /* One line: the report's column padding collapsed. */
  char *w = r;
  for (const char *q = r; *q; q++)
    if (!(*q == ' ' && q > r && q[-1] == ' ')) *w++ = *q;
  *w = 0;
  return r;
}

static void finish(Suite *s, Job *j, int status) {
  j->secs = (now_ms() - j->t0) / 1000;
  j->details = read_fd(j->errfd);
  close(j->errfd);
  j->pid = 0;
  s->running--;
  s->done++;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (j->timed_out) {
    j->result = R_ERROR;
    j->line = xprintf("timed out after %g s", case_timeout(s->o));
  } else if (WIFSIGNALED(status)) {
    j->result = R_ERROR;
    char *last = first_line(j->details, "error");
    j->line = xprintf("crashed (signal %d: %s)%s%s", WTERMSIG(status), strsignal(WTERMSIG(status)),
                      *last ? ": " : "", last);
    free(last);
  } else if (code == 0) {
    j->result = R_PASS;
  } else if (code == EXIT_MISMATCH) {
    j->result = R_FAIL;
    j->line = mismatch_line(j->details);
    /* A case with a reference says where the runs part, on the same line. */
    const char *fd = j->c->reference ? strstr(j->details, "first divergence: ") : NULL;
    if (fd && (fd == j->details || fd[-1] == '\n')) {
      char *l = first_line(fd, NULL), *both = xprintf("%s; %s", j->line, l);
      free(l);
      free(j->line);
      j->line = both;
    }
  } else {
    j->result = R_ERROR;
    char *l = first_line(j->details, "error");
    j->line = xprintf("exit %d: %s", code, l);
    free(l);
  }
  if (j->result == R_PASS && !j->c->expected && !j->c->reference && !s->o->record) {
    j->result = R_FAIL;
    j->line = xprintf("no golden output (expected.npy, .npz or .txt); record one with --record");
  }
  if (s->o->record && j->record_tmp) {
    struct stat st;
    bool wrote = stat(j->record_tmp, &st) == 0;
    /* The output file exists only when the run itself succeeded: a
     * mismatch, a missing golden or a golden of another shape (exit 2 from
     * reading it) is then recorded; errors of the run are not. */
    if (wrote && (j->result != R_PASS || !j->c->expected)) {
      if (rename(j->record_tmp, j->record_dst) == 0) {
        if (j->c->expected && strcmp(j->c->expected, j->record_dst) != 0) unlink(j->c->expected);
        char *why = j->c->expected ? xprintf("was: %s", j->line ? j->line : "different")
                                   : xprintf("new golden output");
        free(j->line);
        j->line = why;
        j->result = R_RECORDED;
      } else {
        free(j->line);
        j->line = xprintf("cannot rename %s to %s: %s", j->record_tmp, j->record_dst, strerror(errno));
        j->result = R_ERROR;
      }
    }
    unlink(j->record_tmp);
  }
  if (j->result == R_FAIL || j->result == R_ERROR) s->failed++;
  progress_clear(s);
  if (j->result == R_FAIL || j->result == R_ERROR) {
    printf("FAIL %s: %s\n", j->c->dir, j->line);
    if (s->o->verbose && *j->details) {
      for (const char *p = j->details; *p;) {
        const char *e = strchr(p, '\n');
        int n = e ? (int)(e - p) : (int)strlen(p);
        printf("    %.*s\n", n, p);
        p += n + (e ? 1 : 0);
      }
    }
  } else if (j->result == R_RECORDED) {
    printf("recorded %s (%s)\n", j->record_dst, j->line);
  } else if (s->o->verbose) {
    printf("ok %s (%.3f s)\n", j->c->dir, j->secs);
  }
  fflush(stdout);
  progress_draw(s, true);
}

/* ---- JUnit XML ---- */

static void xml_text(FILE *f, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    default:
      if (*p < 0x20 && *p != '\n' && *p != '\t') fputc('?', f);   /* not allowed in XML 1.0 */
      else fputc(*p, f);
    }
  }
}

static int write_junit(Suite *s, double secs) {
  const char *path = s->o->junit;
  char *tmp = xprintf("%s.tmp-%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
    free(tmp);
    return -1;
  }
  int fails = 0, errors = 0;
  for (int i = 0; i < s->n; i++) {
    fails += s->jobs[i].result == R_FAIL;
    errors += s->jobs[i].result == R_ERROR;
  }
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(f, "<testsuites tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n", s->n, fails,
          errors, secs);
  fprintf(f, "  <testsuite name=\"hlorun\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\" "
          "time=\"%.3f\">\n", s->n, fails, errors, secs);
  for (int i = 0; i < s->n; i++) {
    Job *j = &s->jobs[i];
    const char *dir = j->c->dir;
    while (*dir == '/' || *dir == '.') dir++;   /* "/a/b", "./a", "../a": class names a.b */
    if (!*dir) dir = j->c->dir;
    const char *slash = strrchr(dir, '/');
    char *cls = slash ? xprintf("%.*s", (int)(slash - dir), dir) : xprintf("hlorun");
    for (char *p = cls; *p; p++)
      if (*p == '/') *p = '.';
    fputs("    <testcase classname=\"", f);
    xml_text(f, cls);
    fputs("\" name=\"", f);
    xml_text(f, slash ? slash + 1 : dir);
    fprintf(f, "\" time=\"%.3f\"", j->secs);
    free(cls);
    if (j->result == R_FAIL || j->result == R_ERROR) {
      const char *tag = j->result == R_FAIL ? "failure" : "error";
      fprintf(f, ">\n      <%s type=\"%s\" message=\"", tag, j->result == R_FAIL ? "mismatch" : "error");
      xml_text(f, j->line ? j->line : "");
      fputs("\">", f);
      xml_text(f, j->details ? j->details : "");
      fprintf(f, "</%s>\n    </testcase>\n", tag);
    } else if (j->result == R_RECORDED) {
      fputs(">\n      <system-out>", f);
      xml_text(f, "recorded ");
      xml_text(f, j->record_dst);
      fputs("</system-out>\n    </testcase>\n", f);
    } else {
      fputs("/>\n", f);
    }
  }
  fputs("  </testsuite>\n</testsuites>\n", f);
  int rc = fclose(f) == 0 && rename(tmp, path) == 0 ? 0 : -1;
  if (rc) {
    fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
    unlink(tmp);
  }
  free(tmp);
  return rc;
}

/* ---- The loop ---- */

static void kill_overdue(Suite *s) {
  double limit = case_timeout(s->o);
  double t = now_ms();
  for (int i = 0; i < s->n; i++) {
    Job *j = &s->jobs[i];
    if (j->pid && !j->timed_out && t - j->t0 > limit * 1000) {
      j->timed_out = true;
      kill(j->pid, SIGKILL);
    }
  }
}

static void reap(Suite *s) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
    for (int i = 0; i < s->n; i++)
      if (s->jobs[i].pid == pid) { finish(s, &s->jobs[i], status); break; }
}

int suite_run(const Opts *o, const char *argv0, char *const *dirs, int ndirs) {
  int ncases;
  Case *cases = case_find_all(dirs, ndirs, &ncases);
  if (!cases) return EXIT_ERROR;
  Suite s = {0};
  s.o = o;
  s.n = ncases;
  s.jobs = calloc((size_t)ncases, sizeof *s.jobs);
  s.tty = o->progress > 0 || (o->progress < 0 && isatty(2));
  s.t0 = now_ms();
  char self[4096];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  if (sl > 0) { self[sl] = 0; s.self = self; }
  else s.self = argv0;
  if (!s.jobs) { fprintf(stderr, "%s: out of memory\n", prog); return EXIT_ERROR; }
  if (o->record) {
    HloCtxOptions co = {.struct_size = sizeof co, .threads = 1};
    hlo_ctx_new(&co, &s.ctx);
  }
  for (int i = 0; i < ncases; i++) s.jobs[i].c = &cases[i];
  int jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (jobs < 1) jobs = 1;
  /* SIGCHLD stays blocked so that sigtimedwait can sleep until a child ends. */
  sigset_t chld, old;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &old);
  int next = 0, rc = EXIT_OK;
  while (next < ncases || s.running > 0) {
    while (s.running < jobs && next < ncases) {
      if (start(&s, &s.jobs[next]) != 0) { rc = EXIT_ERROR; break; }
      next++;
    }
    if (rc != EXIT_OK && s.running == 0) break;
    progress_draw(&s, false);
    struct timespec ts = {0, 100 * 1000 * 1000};
    sigtimedwait(&chld, NULL, &ts);
    reap(&s);
    kill_overdue(&s);
    if (rc != EXIT_OK) next = ncases;   /* could not start: finish what runs */
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  progress_clear(&s);
  int passed = 0, recorded = 0;
  for (int i = 0; i < ncases; i++) {
    passed += s.jobs[i].result == R_PASS || s.jobs[i].result == R_RECORDED;
    recorded += s.jobs[i].result == R_RECORDED;
  }
  if (o->junit && write_junit(&s, (now_ms() - s.t0) / 1000) != 0) rc = EXIT_ERROR;
  if (recorded) printf("%d golden file%s rewritten\n", recorded, recorded == 1 ? "" : "s");
  printf("%d passed, %d failed\n", passed, s.failed);
  fflush(stdout);
  if (rc == EXIT_OK && s.failed) rc = EXIT_MISMATCH;
  for (int i = 0; i < ncases; i++) {
    free(s.jobs[i].record_tmp);
    free(s.jobs[i].record_dst);
    free(s.jobs[i].line);
    free(s.jobs[i].details);
    case_free(&cases[i]);
  }
  free(cases);
  free(s.jobs);
  hlo_ctx_free(s.ctx);
  return rc;
}

/* extract.c: --extract [COMPUTATION/]NAME[@K][#DEVICE][:DEPTH] DIR, the
 * sub-module around one instruction as a case directory with the real
 * values it had in this run.
 *
 * The library builds the sub-module (hlo_module_extract_around: NAME, the
 * instructions within DEPTH operand steps, the cut values as parameters);
 * this file watches the run (one more observer beside debug.c's) and keeps
 * a copy of the latest value of every cut instruction. When NAME finishes
 * for the K-th time (counted from 0 over the run: in a loop body, K is the
 * iteration) on device DEVICE (default 0), the cut values of that moment
 * are the inputs and NAME's value the expected result: every cut value was
 * computed in the same activation of NAME's computation, before NAME, and a
 * computation never runs inside itself. Then the directory is written:
 * module.hlo, in0.npy ... (.npz for a tuple), expected.npy|.npz, args (the
 * run's custom-call bindings) and command (sh DIR/command replays it).
 *
 * Not here: cutting the module (the library), the run itself (hlorun.c). */
#include "cli.h"
#include <ctype.h>
#include <dirent.h>
#include <getopt.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct Extract {
  HloCtx *ctx;
  const Opts *o;
  const HloInstruction *target;
  long iteration;             /* the K-th run of target is captured */
  int device;
  HloModule *sub;             /* the sub-module */
  const HloInstruction **cut; /* parameter k of sub stands for cut[k] */
  int ncut;
  HloBuffer **latest;         /* owned: latest value of each cut instruction */
  HloBuffer **inputs;         /* owned: the captured inputs (NULL until then) */
  HloBuffer *expected;        /* owned: target's value at its K-th run */
  long runs;                  /* times target finished so far */
  bool failed;                /* a copy failed: reported at the end */
};

/* Levenshtein distance, for suggesting names (short strings only). */
static int distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > 64 || m > 64) return 99;
  int row[65];
  for (size_t j = 0; j <= m; j++) row[j] = (int)j;
  for (size_t i = 1; i <= n; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= m; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[m];
}

/* "no instruction NAME" with up to 8 close names (edit distance, or the
 * name holding NAME). */
static void unknown_name(const HloModule *m, const char *comp, const char *name) {
  fprintf(stderr, "%s: error: --extract: %s has no instruction '%s%s%s'", prog,
          comp ? "the computation" : "the module", comp ? comp : "", comp ? "/" : "", name);
  int shown = 0, limit = (int)strlen(name) / 3 > 1 ? (int)strlen(name) / 3 : 1;
  for (int c = 0; c < hlo_module_num_computations(m) && shown < 8; c++)
    for (int k = 0; k < hlo_module_computation_size(m, c) && shown < 8; k++) {
      const char *n = hlo_instruction_name(hlo_module_instruction(m, c, k));
      if (distance(n, name) > limit && !strstr(n, name)) continue;
      fprintf(stderr, "%s %s/%s", shown ? "," : "; close names:", hlo_module_computation_name(m, c), n);
      shown++;
    }
  fputc('\n', stderr);
}

/* The instruction a spec names: COMPUTATION/NAME, or NAME (ENTRY first). */
static const HloInstruction *find_named(const HloModule *m, const char *comp, const char *name) {
  const HloInstruction *found = NULL;
  int also = -1;
  for (int c = 0; c < hlo_module_num_computations(m); c++) {
    if (comp && strcmp(hlo_module_computation_name(m, c), comp) != 0) continue;
    for (int k = 0; k < hlo_module_computation_size(m, c); k++) {
      const HloInstruction *i = hlo_module_instruction(m, c, k);
      if (strcmp(hlo_instruction_name(i), name) != 0) continue;
      if (!found) found = i;
      else if (also < 0) also = c;
    }
  }
  if (!comp) {
    const HloInstruction *first = hlo_module_find_instruction(m, name);
    if (first && also >= 0)
      fprintf(stderr, "%s: note: --extract: '%s' names instructions of several computations; "
              "taking the one in %s (COMPUTATION/%s picks another)\n", prog, name,
              hlo_instruction_computation(first), name);
    return first;
  }
  return found;
}

/* A whole non-negative integer. */
static bool parse_count(const char *s, long *out) {
  if (!*s || !isdigit((unsigned char)*s)) return false;
  char *e;
  errno = 0;
  long v = strtol(s, &e, 10);
  if (errno || *e || v > 1000000000L) return false;
  *out = v;
  return true;
}

/* DIR must be absent or empty, unless --force (then the files of an old
 * case go: a stale in3.npy would become an input). 0 ok, else -1. */
int case_prepare_dir(const char *dir, bool force, const char *option) {
  struct stat st;
  if (stat(dir, &st) != 0) {
    if (mkdir(dir, 0777) == 0) return 0;
    fprintf(stderr, "%s: error: %s: cannot create %s: %s\n", prog, option, dir, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    fprintf(stderr, "%s: error: %s: %s exists and is not a directory\n", prog, option, dir);
    return -1;
  }
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "%s: error: %s: cannot read %s: %s\n", prog, option, dir, strerror(errno));
    return -1;
  }
  struct dirent *e;
  int rc = 0;
  while ((e = readdir(d)) && rc == 0) {
    const char *n = e->d_name;
    if (!strcmp(n, ".") || !strcmp(n, "..")) continue;
    if (!force) {
      fprintf(stderr, "%s: error: %s: %s is not empty (--force writes the case there anyway)\n",
              prog, option, dir);
      rc = -1;
      break;
    }
    bool ours = (n[0] == 'i' && n[1] == 'n' && isdigit((unsigned char)n[2])) ||
                !strncmp(n, "expected.", 9) || !strcmp(n, "module.hlo") || !strcmp(n, "case.hlo") ||
                !strcmp(n, "command") || !strcmp(n, "args") || !strcmp(n, "tolerance") ||
                !strcmp(n, "case.json") || !strcmp(n, "meta.json");
    if (!ours) continue;
    char *p = xprintf("%s/%s", dir, n);
    if (unlink(p) != 0) {
      fprintf(stderr, "%s: error: %s: cannot remove %s: %s\n", prog, option, p, strerror(errno));
      rc = -1;
    }
    free(p);
  }
  closedir(d);
  return rc;
}

int extract_new(HloCtx *ctx, const HloModule *m, const Opts *o, Extract **out) {
  *out = NULL;
  if (!o->extract) return EXIT_OK;
  char *spec = xprintf("%s", o->extract);
  long depth = 0, iteration = 0, device = 0;
  char *p;
  int rc = EXIT_ERROR;
  Extract *x = NULL;
  if ((p = strrchr(spec, ':'))) {
    *p++ = 0;
    if (*p == '-') {
      fprintf(stderr, "%s: error: --extract: DEPTH '%s' is negative (operand steps above NAME, "
              ">= 0)\n", prog, p);
      goto out;
    }
    if (!parse_count(p, &depth)) {
      fprintf(stderr, "%s: error: --extract: bad DEPTH '%s' (a whole number >= 0)\n", prog, p);
      goto out;
    }
  }
  if ((p = strrchr(spec, '#'))) {
    *p++ = 0;
    if (!parse_count(p, &device)) {
      fprintf(stderr, "%s: error: --extract: bad DEVICE '%s' (a device number >= 0)\n", prog, p);
      goto out;
    }
  }
  if ((p = strrchr(spec, '@'))) {
    *p++ = 0;
    if (!parse_count(p, &iteration)) {
      fprintf(stderr, "%s: error: --extract: bad ITERATION '%s' (a whole number >= 0, counted "
              "from 0)\n", prog, p);
      goto out;
    }
  }
  char *name = spec, *comp = NULL;
  if ((p = strchr(spec, '/'))) { *p = 0; comp = spec; name = p + 1; }
  if (*name == '%') name++;
  if (!*name) { fprintf(stderr, "%s: error: --extract: no NAME in '%s'\n", prog, o->extract); goto out; }
  const HloInstruction *ins = find_named(m, comp, name);
  if (!ins) { unknown_name(m, comp, name); goto out; }
  if (case_prepare_dir(o->extract_dir, o->force, "--extract") != 0) goto out;
  x = calloc(1, sizeof *x);
  if (!x) { fprintf(stderr, "%s: out of memory\n", prog); goto out; }
  x->ctx = ctx;
  x->o = o;
  x->target = ins;
  x->iteration = iteration;
  x->device = (int)device;
  if (hlo_module_extract_around(ctx, m, ins, (int)depth, &x->sub, &x->cut, &x->ncut) != HLO_OK) {
    rc = fail_with(ctx, "--extract: cannot cut the module");
    goto out;
  }
  /* Another device's values are not in this case: a collective (or a
   * replica-id) kept would read them or differ alone. */
  if (hlo_module_is_device_dependent(x->sub)) {
    fprintf(stderr, "%s: error: --extract: the sub-module around %s holds a collective or a "
            "replica/partition id, which cannot run on one device's values; pick a smaller "
            "DEPTH or an instruction below it\n", prog, name);
    goto out;
  }
  x->latest = calloc((size_t)x->ncut + 1, sizeof *x->latest);
  if (!x->latest) { fprintf(stderr, "%s: out of memory\n", prog); goto out; }
  *out = x;
  x = NULL;
  rc = EXIT_OK;
out:
  extract_free(x);
  free(spec);
  return rc;
}

static void keep_copy(Extract *x, HloBuffer **slot, const HloValue *v) {
  HloBuffer *b = NULL;
  if (hlo_value_to_buffer(x->ctx, v, &b) != HLO_OK) { x->failed = true; return; }
  hlo_buffer_free(*slot);
  *slot = b;
}

int extract_event(const HloEvent *e, void *user) {
  Extract *x = user;
  if (!x || x->inputs || e->phase != HLO_OBSERVE_AFTER || e->device != x->device) return 0;
  for (int k = 0; k < x->ncut; k++)
    if (e->instruction == x->cut[k]) keep_copy(x, &x->latest[k], e->result);
  if (e->instruction != x->target || x->runs++ != x->iteration) return 0;
  keep_copy(x, &x->expected, e->result);
  /* This moment's cut values are the inputs; later runs change nothing. */
  x->inputs = x->latest;
  x->latest = NULL;
  for (int k = 0; k < x->ncut; k++)
    if (!x->inputs[k]) x->failed = true;   /* a cut value that never ran */
  return 0;
}

static int save(Extract *x, const HloBuffer *b, const char *base) {
  char *p = xprintf("%s/%s.%s", x->o->extract_dir, base, hlo_buffer_tuple_size(b) > 0 ? "npz"
                                                                         : "npy");
  int rc = hlo_buffer_save(x->ctx, b, p) == HLO_OK ? 0 : -1;
  if (rc) fail_with(x->ctx, p);
  free(p);
  return rc;
}

int extract_finish(Extract *x) {
  if (!x) return EXIT_OK;
  const char *name = hlo_instruction_name(x->target);
  if (!x->inputs) {
    if (x->runs == 0)
      fprintf(stderr, "%s: error: --extract: %s never ran%s (nothing needed its value, or the run "
              "stopped first): nothing extracted\n", prog, name, x->device ? " on that device" : "");
    else
      fprintf(stderr, "%s: error: --extract: %s ran %ld time%s; there is no run %ld (NAME@K counts "
              "from 0)\n", prog, name, x->runs, x->runs == 1 ? "" : "s", x->iteration);
    return EXIT_ERROR;
  }
  if (x->failed || !x->expected) {
    fprintf(stderr, "%s: error: --extract: could not keep the values around %s\n", prog, name);
    flush_diags(x->ctx);
    return EXIT_ERROR;
  }
  const char *dir = x->o->extract_dir;
  char *text = NULL;
  size_t len = 0;
  if (hlo_module_print(x->ctx, x->sub, &text, &len) != HLO_OK) return fail_with(x->ctx, "--extract");
  char *p = xprintf("%s/module.hlo", dir);
  FILE *f = fopen(p, "w");
  bool ok = f && fwrite(text, 1, len, f) == len;
  ok = f && fclose(f) == 0 && ok;
  hlo_free(text);
  if (!ok) { fprintf(stderr, "%s: error: cannot write %s\n", prog, p); free(p); return EXIT_ERROR; }
  free(p);
  for (int k = 0; k < x->ncut; k++) {
    char *base = xprintf("in%d", k);
    int rc = save(x, x->inputs[k], base);
    free(base);
    if (rc) return EXIT_ERROR;
  }
  if (save(x, x->expected, "expected")) return EXIT_ERROR;
  if (case_write_command(x->o, dir, NULL) != 0) return EXIT_ERROR;
  fprintf(stderr, "%s: extracted %s (%s, line %d) run %ld to %s: %d input%s\n", prog, name,
          hlo_instruction_opcode(x->target), hlo_instruction_line(x->target), x->iteration, dir,
          x->ncut, x->ncut == 1 ? "" : "s");
  return EXIT_OK;
}

void extract_free(Extract *x) {
  if (!x) return;
  for (int k = 0; k < x->ncut; k++) {
    if (x->latest) hlo_buffer_free(x->latest[k]);
    if (x->inputs) hlo_buffer_free(x->inputs[k]);
  }
  free(x->latest);
  free(x->inputs);
  hlo_buffer_free(x->expected);
  hlo_free(x->cut);
  hlo_module_free(x->sub);
  free(x);
}

int repro_option(int c, const char *arg, int argc, char **argv, Opts *o, int *rc) {
  *rc = EXIT_OK;
  switch (c) {
  case OPT_EXTRACT:
    /* DIR is the next word (getopt moves earlier operands past it). */
    if (optind >= argc || !*argv[optind]) {
      fprintf(stderr, "%s: --extract %s: missing DIR (--extract NAME[:DEPTH] DIR)\n", prog, arg);
      *rc = EXIT_ERROR;
      return 1;
    }
    o->extract = arg;
    o->extract_dir = argv[optind++];
    return 1;
  case OPT_FORCE: o->force = true; return 1;
  case OPT_SAVE_SNAPSHOT: o->save_snapshot = arg; return 1;
  case OPT_REDUCE: o->reduce = arg; return 1;
  default: return 0;
  }
}

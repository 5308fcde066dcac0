/* casedir.c: the layout of a golden case directory, as --suite and
 * --replay read it, and finding cases under folders.
 *
 * A case is a directory holding
 *   module.hlo (or case.hlo)      the module
 *   in0.npy|.npz|.txt, in1...     one input per ENTRY parameter, numbered
 *                                 from 0 without gaps (optional)
 *   expected.npy|.npz|.txt        the golden result
 *   reference.hlo                 optional: a reference module; the case runs
 *                                 as --reference does (the results and every
 *                                 instruction compared); then expected is
 *                                 optional
 *   tolerance                     optional: "rtol=R atol=A" (either; # comments)
 *   case.json or meta.json        optional: {"compare": "eq"|"close",
 *                                 "rtol": R, "atol": A, "tolerance": {"rtol":
 *                                 R, "atol": A}}; "eq" means exact
 *   args                          optional: extra hlorun options, one per line
 * This is the layout of ../shared/conformance/cases, ../shared/evalcases/cases
 * and of the directories --dump-custom-calls writes.
 *
 * Not here: running cases (suite.c), reading values (the library). */
#include "cli.h"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "dir/name", or NULL if that file does not exist (the path is freed). */
static char *file_in(const char *dir, const char *name) {
  char *p = xprintf("%s/%s", dir, name);
  if (is_file(p)) return p;
  free(p);
  return NULL;
}

/* dir/BASE.npy, .npz or .txt: the first that exists. */
static char *value_file(const char *dir, const char *base) {
  static const char *const ext[] = {"npy", "npz", "txt"};
  for (int i = 0; i < 3; i++) {
    char *name = xprintf("%s.%s", base, ext[i]);
    char *p = file_in(dir, name);
    free(name);
    if (p) return p;
  }
  return NULL;
}

bool case_is_dir(const char *dir) {
  char *p = file_in(dir, "module.hlo");
  if (!p) p = file_in(dir, "case.hlo");
  free(p);
  return p != NULL;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *b = xmalloc(cap);
  size_t r;
  while ((r = fread(b + n, 1, cap - n - 1, f)) > 0) {
    n += r;
    if (n + 1 == cap) {
      cap *= 2;
      char *nb = realloc(b, cap);
      if (!nb) { free(b); fclose(f); return NULL; }
      b = nb;
    }
  }
  fclose(f);
  b[n] = 0;
  if (len) *len = n;
  return b;
}

/* ---- case.json / meta.json, read with jansson ---- */

/* A tolerance member: absent leaves *out; a number >= 0 sets it; anything
 * else is an error naming the member. */
static int json_tolerance(json_t *obj, const char *key, const char *path, double *out) {
  json_t *v = json_object_get(obj, key);
  if (!v) return 0;
  double d = json_is_number(v) ? json_number_value(v) : -1;
  if (!(d >= 0)) {
    fprintf(stderr, "%s: %s: \"%s\" must be a number >= 0\n", prog, path, key);
    return -1;
  }
  *out = d;
  return 0;
}

static int read_json(const char *path, Case *c) {
  json_error_t e;
  json_t *t = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
  if (!t) {
    fprintf(stderr, "%s: %s:%d:%d: %s\n", prog, path, e.line, e.column, e.text);
    return -1;
  }
  int rc = 0;
  if (!json_is_object(t)) {
    fprintf(stderr, "%s: %s: not a JSON object\n", prog, path);
    rc = -1;
  } else {
    const char *cmp = json_string_value(json_object_get(t, "compare"));
    if (cmp && strcmp(cmp, "eq") == 0) c->rtol = c->atol = 0;
    json_t *tol = json_object_get(t, "tolerance");
    if (json_is_object(tol))
      rc |= json_tolerance(tol, "rtol", path, &c->rtol) | json_tolerance(tol, "atol", path, &c->atol);
    rc |= json_tolerance(t, "rtol", path, &c->rtol) | json_tolerance(t, "atol", path, &c->atol);
  }
  json_decref(t);
  return rc;
}

/* "rtol=R atol=A", whitespace separated, '#' to the end of a line. */
static int read_tolerance(const char *path, Case *c) {
  char *t = slurp(path, NULL);
  if (!t) { fprintf(stderr, "%s: cannot read %s: %s\n", prog, path, strerror(errno)); return -1; }
  int rc = 0;
  for (char *p = t; *p && rc == 0;) {
    if (*p == '#') { while (*p && *p != '\n') p++; continue; }
    if (strchr(" \t\r\n", *p)) { p++; continue; }
    char *w = p;
    while (*p && !strchr(" \t\r\n#", *p)) p++;
    char save = *p;
    *p = 0;
    double *dst = strncmp(w, "rtol=", 5) == 0 ? &c->rtol : strncmp(w, "atol=", 5) == 0 ? &c->atol : NULL;
    char *e = NULL;
    double v = dst ? strtod(w + 5, &e) : -1;
    if (!dst || e == w + 5 || *e || !(v >= 0)) {
      fprintf(stderr, "%s: %s: expected rtol=R or atol=A, got '%s'\n", prog, path, w);
      rc = -1;
    } else {
      *dst = v;
    }
    *p = save;
  }
  free(t);
  return rc;
}

static int read_args(const char *path, Case *c) {
  char *t = slurp(path, NULL);
  if (!t) { fprintf(stderr, "%s: cannot read %s: %s\n", prog, path, strerror(errno)); return -1; }
  for (char *line = t; *line;) {
    char *nl = strchr(line, '\n');
    char *next = nl ? nl + 1 : line + strlen(line);
    if (nl) *nl = 0;
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) line[--n] = 0;
    while (*line == ' ' || *line == '\t') line++;
    if (*line && *line != '#') {
      c->args = realloc(c->args, (size_t)(c->nargs + 1) * sizeof *c->args);
      if (!c->args) { fprintf(stderr, "%s: out of memory\n", prog); exit(EXIT_ERROR); }
      c->args[c->nargs++] = xprintf("%s", line);
    }
    line = next;
  }
  free(t);
  return 0;
}

int case_load(const char *dir, Case *c) {
  memset(c, 0, sizeof *c);
  c->rtol = c->atol = -1;
  c->dir = xprintf("%s", dir);
  c->module = file_in(dir, "module.hlo");
  if (!c->module) c->module = file_in(dir, "case.hlo");
  if (!c->module) {
    fprintf(stderr, "%s: %s: not a case directory (no module.hlo or case.hlo)\n", prog, dir);
    return -1;
  }
  for (int i = 0;; i++) {
    char *base = xprintf("in%d", i);
    char *p = value_file(dir, base);
    free(base);
    if (!p) break;
    c->inputs = realloc(c->inputs, (size_t)(i + 1) * sizeof *c->inputs);
    if (!c->inputs) { fprintf(stderr, "%s: out of memory\n", prog); exit(EXIT_ERROR); }
    c->inputs[c->ninputs++] = p;
  }
  c->expected = value_file(dir, "expected");
  c->reference = file_in(dir, "reference.hlo");
  char *p;
  int rc = 0;
  if ((p = file_in(dir, "meta.json"))) { rc |= read_json(p, c); free(p); }
  if ((p = file_in(dir, "case.json"))) { rc |= read_json(p, c); free(p); }
  if ((p = file_in(dir, "tolerance"))) { rc |= read_tolerance(p, c); free(p); }
  if ((p = file_in(dir, "args"))) { rc |= read_args(p, c); free(p); }
  return rc ? -1 : 0;
}

void case_free(Case *c) {
  free(c->dir);
  free(c->module);
  for (int i = 0; i < c->ninputs; i++) free(c->inputs[i]);
  free(c->inputs);
  free(c->expected);
  free(c->reference);
  for (int i = 0; i < c->nargs; i++) free(c->args[i]);
  free(c->args);
  memset(c, 0, sizeof *c);
}

/* ---- Finding cases ---- */

typedef struct Paths { char **v; int n, cap; } Paths;

static void paths_add(Paths *p, char *s) {
  if (p->n == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 64;
    p->v = realloc(p->v, (size_t)p->cap * sizeof *p->v);
    if (!p->v) { fprintf(stderr, "%s: out of memory\n", prog); exit(EXIT_ERROR); }
  }
  p->v[p->n++] = s;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void find_rec(const char *dir, int depth, Paths *out) {
  if (case_is_dir(dir)) { paths_add(out, xprintf("%s", dir)); return; }
  if (depth > 8) return;
  DIR *d = opendir(dir);
  if (!d) return;
  Paths sub = {0};
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char *p = xprintf("%s/%s", dir, e->d_name);
    if (is_dir(p)) paths_add(&sub, p);
    else free(p);
  }
  closedir(d);
  if (sub.n) qsort(sub.v, (size_t)sub.n, sizeof *sub.v, cmp_str);
  for (int i = 0; i < sub.n; i++) {
    find_rec(sub.v[i], depth + 1, out);
    free(sub.v[i]);
  }
  free(sub.v);
}

Case *case_find_all(char *const *dirs, int ndirs, int *n) {
  *n = 0;
  Paths all = {0};
  for (int i = 0; i < ndirs; i++) {
    char *d = xprintf("%s", dirs[i]);
    size_t l = strlen(d);
    while (l > 1 && d[l - 1] == '/') d[--l] = 0;
    if (!is_dir(d)) {
      fprintf(stderr, "%s: %s: not a directory\n", prog, d);
      free(d);
      goto fail;
    }
    int before = all.n;
    find_rec(d, 0, &all);
    if (all.n == before) {
      fprintf(stderr, "%s: %s: no cases (directories holding module.hlo or case.hlo)\n", prog, d);
      free(d);
      goto fail;
    }
    free(d);
  }
  Case *cs = calloc((size_t)(all.n ? all.n : 1), sizeof *cs);
  if (!cs) { fprintf(stderr, "%s: out of memory\n", prog); exit(EXIT_ERROR); }
  int bad = 0;
  for (int i = 0; i < all.n; i++) {
    if (case_load(all.v[i], &cs[i]) != 0) bad++;
    free(all.v[i]);
  }
  free(all.v);
  if (bad) {
    for (int i = 0; i < all.n; i++) case_free(&cs[i]);
    free(cs);
    return NULL;
  }
  *n = all.n;
  return cs;
fail:
  for (int i = 0; i < all.n; i++) free(all.v[i]);
  free(all.v);
  return NULL;
}

/* ---- Writing a case's command ---- */

/* Absolute form of the library part of "TARGET=LIB[:SYM]" or "LIB[:FN]". */
static char *abs_lib(const char *lib) {
  char buf[PATH_MAX];
  if (lib[0] == '/' || !realpath(lib, buf)) return xprintf("%s", lib);
  return xprintf("%s", buf);
}

void case_write_args(FILE *f, const Opts *o) {
  for (int i = 0; i < o->nbind; i++) {
    char *l = abs_lib(o->bind[i].lib);
    fprintf(f, "--custom-call=%s=%s%s%s\n", o->bind[i].target, l, o->bind[i].symbol ? ":" : "",
            o->bind[i].symbol ? o->bind[i].symbol : "");
    free(l);
  }
  for (int i = 0; i < o->nplugins; i++) {
    char *l = abs_lib(o->plugins[i]);
    fprintf(f, "--plugin=%s\n", l);
    free(l);
  }
  for (int i = 0; i < o->nmembers; i++)
    fprintf(f, "%s%s\n", *o->members[i] ? "--ffi-members=" : "--ffi-members", o->members[i]);
  if (o->all_stages) fprintf(f, "--ffi-all-stages\n");
}

int case_write_command(const Opts *o, const char *dir, const char *options) {
  char *p = xprintf("%s/args", dir);
  FILE *f = fopen(p, "w");
  bool ok = f != NULL;
  if (f) {
    fprintf(f, "# options --replay uses (the custom-call bindings of the run it came from)\n");
    case_write_args(f, o);
    ok = fclose(f) == 0;
  }
  if (!ok) { fprintf(stderr, "%s: error: cannot write %s\n", prog, p); free(p); return -1; }
  free(p);
  p = xprintf("%s/command", dir);
  f = fopen(p, "w");
  ok = f != NULL;
  if (f) {
    fprintf(f, "# Replays this case: sh %s/command (HLORUN names the hlorun to use)\n"
            "\"${HLORUN:-hlorun}\" --replay \"$(dirname \"$0\")\"%s%s \"$@\"\n", dir,
            options ? " " : "", options ? options : "");
    ok = fclose(f) == 0;
  }
  if (!ok) { fprintf(stderr, "%s: error: cannot write %s\n", prog, p); free(p); return -1; }
  free(p);
  return 0;
}

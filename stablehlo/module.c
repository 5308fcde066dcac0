/* module.c: a module (or a "// -----" part of a test file) as an HLO module:
 * functions as computations (the entry, and each function func.call calls),
 * the module's attributes as the HLO module header, and the public entry
 * points: one module's HLO text, or every test function of a test file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stablehlo/lower.h"
#include "parser/parser.h"
#include "stablehlo/mlir.h"

void sh_lower_body(Lower *C, ShNode *region, Binding ***ret, int *nret);

static bool name_is(const ShNode *op, const char *src, const char *w) {
  size_t n = strlen(w);
  if (src[op->name.off] == '"') return op->name.len == n + 2 && memcmp(src + op->name.off + 1, w, n) == 0;
  return op->name.len == n && memcmp(src + op->name.off, w, n) == 0;
}

/* Pieces of "func.func [public|private] @name(args) [-> results] [attributes {..}] {body}". */
typedef struct FuncSig {
  ShNode *sym, *args, *results, *attrs, *body;
  bool is_private;
} FuncSig;

static void func_sig(Lower *C, ShNode *op, FuncSig *s) {
  memset(s, 0, sizeof *s);
  for (ShNode *k = op->kids; k; k = k->next) {
    if (sh_is(C, k, SH_BAREID, "private")) s->is_private = true;
    else if (sh_is(C, k, SH_SYMBOL, NULL) && !s->sym) s->sym = k;
    else if (k->kind == SHN_PAREN && s->sym && !s->args) s->args = k;
    else if (sh_is(C, k, SH_ARROW, NULL)) s->results = k->next;
    else if (sh_is(C, k, SH_BAREID, "attributes") && k->next && k->next->kind == SHN_DICT) s->attrs = k->next;
    else if (k->kind == SHN_REGION) s->body = k;
  }
  if (!s->sym || !s->args) sh_fail(C, op, "func.func: expected @name(arguments)");
  if (!s->body) sh_fail(C, op, "func.func without a body (external functions are not supported)");
}

static void sym_name(Lower *C, const ShNode *sym, const char **s, size_t *n) {
  *s = C->src + sym->tok.off + 1;
  *n = sym->tok.len - 1;
  if (*n >= 2 && (*s)[0] == '"') {
    ShNode tmp = *sym;
    tmp.tok.off++;
    tmp.tok.len--;
    *s = sh_string(C, &tmp, n);
  }
}

static Func *find_func(Lower *C, const char *s, size_t n) {
  for (int i = 0; i < C->nfuncs; i++)
    if (C->funcs[i].nlen == n && memcmp(C->funcs[i].name, s, n) == 0) return &C->funcs[i];
  return NULL;
}

/* The value node of a dictionary entry, or NULL. */
static const ShNode *dict_value(Lower *C, const ShNode *dict, const char *key) {
  size_t kl = strlen(key);
  for (const ShNode *k = dict ? dict->kids : NULL; k; k = k->next) {
    size_t n;
    const char *s = sh_text(C, k, &n);
    if (k->kind == SHN_TOKEN && k->tok.kind == SH_ATTRKEY && n == kl && memcmp(s, key, n) == 0 && k->next &&
        sh_is(C, k->next, SH_EQ, NULL))
      return k->next->next;
  }
  return NULL;
}

/* A string attribute value of a dictionary node, or NULL. */
static const char *dict_string(Lower *C, const ShNode *dict, const char *key) {
  const ShNode *v = dict_value(C, dict, key);
  size_t n;
  return v && sh_is(C, v, SH_STRING, NULL) ? sh_string(C, v, &n) : NULL;
}

/* An argument's or result's sharding "{...}" (mhlo.sharding, else Shardy's
 * sdy.sharding), or NULL. */
static const char *value_sharding(Lower *C, const ShNode *dict, const ShType *t) {
  const char *s = dict_string(C, dict, "mhlo.sharding");
  if (s) return s;
  const ShNode *v = dict_value(C, dict, "sdy.sharding");
  if (!v) return NULL;
  if (!sh_is(C, v, SH_HASHID, "#sdy.sharding") || !v->next || v->next->kind != SHN_ANGLE)
    sh_fail(C, v, "sdy.sharding: expected #sdy.sharding<@mesh, [...]>");
  return sh_sdy_sharding(C, v->next, t);
}

/* ", sharding={...}" for an argument or result, or "". */
static const char *sharding_attr(Lower *C, const ShNode *dict, const ShType *t) {
  const char *s = value_sharding(C, dict, t);
  return s ? sh_fmt(C, ", sharding=%s", s) : "";
}

static int64_t dict_int(Lower *C, const ShNode *dict, const char *key, int64_t dflt) {
  const ShNode *v = dict_value(C, dict, key);
  return v && sh_is(C, v, SH_INT, NULL) ? strtoll(C->src + v->tok.off, NULL, 10) : dflt;
}

/* Lower function f as a computation (the entry when entry is set). */
static const char *lower_func(Lower *C, Func *f, bool entry, ShType **root_type) {
  if (f->busy) sh_fail(C, f->op, "function @%.*s calls itself (recursion has no HLO form)", (int)f->nlen, f->name);
  f->busy = true;
  FuncSig s;
  func_sig(C, f->op, &s);
  ShNode *names[1024];
  ShType *types[1024];
  ShNode *attrs[1024];
  int nargs = sh_arg_list(C, s.args, names, types, attrs, 1024);
  /* result attributes (shardings) */
  ShNode *rattrs[1024];
  int nres = 0;
  if (s.results && s.results->kind == SHN_PAREN) {
    for (ShNode *k = s.results->kids; k;) {
      if (sh_is(C, k, SH_COMMA, NULL)) { k = k->next; continue; }
      ShNode *t = k;
      sh_parse_type(C, &t);
      if (nres < 1024) rattrs[nres++] = t && t->kind == SHN_DICT ? t : NULL;
      k = t && t->kind == SHN_DICT ? t->next : t;
    }
  }
  Comp *saved = C->cur;
  Comp *c = sh_comp_open(C);
  char base[64];
  size_t k = 0;
  for (size_t i = 0; i < f->nlen && k + 1 < sizeof base; i++) {
    char ch = f->name[i];
    base[k++] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ? ch : '_';
  }
  base[k] = 0;
  c->name = sh_fmt(C, "%s.%d", k ? base : "f", ++C->counter);
  C->cur = c;
  int mark = sh_bind_mark(C);
  /* A function sees only its own values: one lowered on its first call,
   * inside a caller's region, must not take the caller's %iterArg for its
   * own (a capture of the wrong value). */
  int saved_floor = C->scope_floor;
  C->scope_floor = mark;
  for (int i = 0; i < nargs; i++) {
    size_t n;
    const char *an = sh_text(C, names[i], &n);
    const char *pname = sh_fmt(C, "Arg_%d.%d", i, ++C->counter);
    const char *sharding = attrs[i] ? sharding_attr(C, attrs[i], types[i]) : "";   /* may fail: before rhs is allocated */
    HlcText rhs = {0};
    sh_put_type(&rhs, types[i]);
    hlc_text_printf(&rhs, " parameter(%d)%s", i, sharding);
    sh_emit_line(C, pname, rhs.p);
    hlc_text_free(&rhs);
    sh_bind(C, an, n, pname, types[i]);
  }
  bool saved_checks = C->checks_here;
  C->checks_here = entry && C->test_mode;
  Binding **ret;
  int nret;
  sh_lower_body(C, s.body, &ret, &nret);
  C->checks_here = saved_checks;
  ShType *rt;
  if (entry && C->test_mode) {   /* the checked values, in check order */
    ShType **el = hlc_arena_alloc(C->arena, sizeof *el * (size_t)(C->ncheck_vals + 1));
    for (int i = 0; i < C->ncheck_vals; i++) el[i] = C->check_vals[i]->type;
    rt = sh_tuple_type(C, el, C->ncheck_vals);
    HlcText ops = {0};
    for (int i = 0; i < C->ncheck_vals; i++) hlc_text_printf(&ops, "%s%s", i ? ", " : "", C->check_vals[i]->hlo);
    const char *t = sh_emit(C, rt, "tuple", ops.p ? ops.p : "", NULL, NULL);
    hlc_text_free(&ops);
    sh_mark_root(C, sh_bind(C, "", 0, t, rt));
  } else if (nret == 1) {
    rt = ret[0]->type;
    const char *sh = nres == 1 && rattrs[0] ? sharding_attr(C, rattrs[0], rt) : "";
    if (*sh && entry) {   /* the result's sharding on the root */
      const char *cp = sh_emit(C, rt, "copy", ret[0]->hlo, sh, NULL);
      sh_mark_root(C, sh_bind(C, "", 0, cp, rt));
    } else {
      sh_mark_root(C, ret[0]);
    }
  } else {
    ShType **el = hlc_arena_alloc(C->arena, sizeof *el * (size_t)(nret + 1));
    HlcText ops = {0}, shard = {0};
    bool any = false;
    for (int i = 0; i < nret; i++) {
      el[i] = ret[i]->type;
      hlc_text_printf(&ops, "%s%s", i ? ", " : "", ret[i]->hlo);
      const char *one = i < nres && rattrs[i] ? value_sharding(C, rattrs[i], ret[i]->type) : NULL;
      if (one) any = true;
      hlc_text_printf(&shard, "%s%s", i ? ", " : "", one ? one : "{replicated}");
    }
    rt = sh_tuple_type(C, el, nret);
    const char *sh = any && entry ? sh_fmt(C, ", sharding={%s}", shard.p) : "";
    const char *t = sh_emit(C, rt, "tuple", ops.p ? ops.p : "", sh, NULL);
    hlc_text_free(&ops);
    hlc_text_free(&shard);
    sh_mark_root(C, sh_bind(C, "", 0, t, rt));
  }
  if (c->body.oom) sh_fail_off(C, 0, "out of memory");
  hlc_text_printf(&C->module, "%s%s {\n", entry ? "ENTRY " : "", c->name);
  hlc_text_put(&C->module, c->body.p, c->body.n);
  hlc_text_puts(&C->module, "}\n\n");
  hlc_text_free(&c->body);
  sh_bind_unwind(C, mark);
  C->scope_floor = saved_floor;
  C->cur = saved;
  f->busy = false;
  f->comp = c->name;
  f->root_type = rt;
  if (root_type) *root_type = rt;
  return c->name;
}

Func *sh_find_func(Lower *C, const char *sym, size_t n) { return find_func(C, sym, n); }

const char *sh_func_computation(Lower *C, const char *sym, size_t n, const ShNode *at, ShType **root_type) {
  Func *f = find_func(C, sym, n);
  if (!f) sh_fail(C, at, "call of an undefined function @%.*s", (int)n, sym);
  if (f->comp) {
    *root_type = f->root_type;
    return f->comp;
  }
  return lower_func(C, f, false, root_type);
}

/* Functions, aliases and module attributes of one part. */
static void collect(Lower *C, ShNode *chunk, ShNode **module_op) {
  *module_op = NULL;
  ShNode *ops = chunk;
  for (ShNode *k = chunk->kids; k; k = k->next)
    if (name_is(k, C->src, "module") || name_is(k, C->src, "builtin.module")) {
      *module_op = k;
      ShNode *r = NULL;
      for (ShNode *x = k->kids; x; x = x->next)
        if (x->kind == SHN_REGION) r = x;
      if (!r || r->nkids != 1) sh_fail(C, k, "module: expected one region");
      /* After its region a module has at most its location, loc(...). */
      ShNode *after = r->next;
      if (after && sh_is(C, after, SH_BAREID, "loc") && after->next && after->next->kind == SHN_PAREN)
        after = after->next->next;
      if (after) sh_fail(C, after, "unexpected text after the module's closing brace");
      ops = r->kids;
    }
  /* Beside a module only attribute aliases (#loc = ...): anything else
   * would be dropped silently. */
  for (ShNode *k = chunk->kids; *module_op && k; k = k->next)
    if (k != *module_op && k->name.kind != SH_ALIAS)
      sh_fail(C, k, "'%.*s' outside the module (a part holds one module and attribute aliases)",
              (int)(k->name.len ? k->name.len : 1), C->src + k->name.off);
  int nf = 0, na = 0;
  for (ShNode *k = ops->kids; k; k = k->next) nf++;
  for (ShNode *k = chunk->kids; k; k = k->next) na++;
  C->funcs = hlc_arena_alloc(C->arena, sizeof(Func) * (size_t)(nf + 1));
  C->aliases = hlc_arena_alloc(C->arena, sizeof(ShNode *) * (size_t)(na + nf + 1));
  for (ShNode *k = chunk->kids; k; k = k->next)
    if (k->name.kind == SH_ALIAS) C->aliases[C->naliases++] = k;
  for (ShNode *k = ops->kids; k; k = k->next) {
    if (k->name.kind == SH_ALIAS) { if (ops != chunk) C->aliases[C->naliases++] = k; continue; }
    if (name_is(k, C->src, "func.func")) {
      FuncSig s;
      func_sig(C, k, &s);
      Func *f = &C->funcs[C->nfuncs++];
      memset(f, 0, sizeof *f);
      size_t fl;
      sym_name(C, s.sym, &f->name, &fl);
      f->nlen = (uint32_t)fl;
      f->op = k;
      f->is_public = !s.is_private;
      f->nargs = 0;
      for (ShNode *a = s.args->kids; a; a = a->next)
        if (sh_is(C, a, SH_VALUE, NULL)) f->nargs++;
      continue;
    }
    if (name_is(k, C->src, "sdy.mesh")) {
      sh_sdy_mesh(C, k);
      continue;
    }
    if (name_is(k, C->src, "module")) continue;
    sh_fail(C, k, "unsupported top-level operation %.*s", (int)k->name.len, C->src + k->name.off);
  }
  if (*module_op) {
    for (ShNode *x = (*module_op)->kids; x; x = x->next)
      if (sh_is(C, x, SH_BAREID, "attributes") && x->next && x->next->kind == SHN_DICT) {
        C->num_replicas = dict_int(C, x->next, "mhlo.num_replicas", 1);
        C->num_partitions = dict_int(C, x->next, "mhlo.num_partitions", 1);
      }
  }
}

static void module_header(Lower *C, HlcText *out, ShNode *module_op) {
  const char *name = "module";
  size_t n = 6;
  for (ShNode *x = module_op ? module_op->kids : NULL; x; x = x->next)
    if (sh_is(C, x, SH_SYMBOL, NULL)) {
      sym_name(C, x, &name, &n);
      break;
    }
  hlc_text_puts(out, "HloModule ");
  for (size_t i = 0; i < n; i++) {
    char ch = name[i];
    hlc_text_put(out, (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                         ch == '.' || ch == '-' ? &name[i] : "_", 1);
  }
  int64_t r = C->grid_replicas ? C->grid_replicas : C->num_replicas;
  int64_t p = C->grid_partitions ? C->grid_partitions : C->num_partitions;
  if (r > 1) hlc_text_printf(out, ", replica_count=%lld", (long long)r);
  if (p > 1) hlc_text_printf(out, ", num_partitions=%lld", (long long)p);
  for (ShNode *x = module_op ? module_op->kids : NULL; x; x = x->next)
    if (sh_is(C, x, SH_BAREID, "attributes") && x->next && x->next->kind == SHN_DICT)
      hlc_text_puts(out, sh_frontend_attrs(C, dict_value(C, x->next, "mhlo.frontend_attributes")));
  hlc_text_puts(out, "\n\n");
}

static void lower_init(Lower *C, ShParser *P) {
  memset(C, 0, sizeof *C);
  C->arena = P->arena;
  C->P = P;
  C->src = P->src;
  C->num_replicas = C->num_partitions = 1;
}

static void lower_done(Lower *C) {
  for (Comp *c = C->all; c; c = c->all_next) hlc_text_free(&c->body);   /* those a failure left open */
  hlc_text_free(&C->module);
  hlc_text_free(&C->par_pre);
  free(C->b);
  free(C->table);
}

/* Run fn(C, arg); 0, or -1 when it failed (the error is recorded). */
static int guarded(Lower *C, void (*fn)(Lower *, void *), void *arg) {
  if (setjmp(C->fail)) return -1;
  fn(C, arg);
  return 0;
}

typedef struct TranslateJob {
  ShNode *chunk;
  const char *entry;
  char *text, *pre;   /* pre: with interpreter.run_parallel, the module of its operands */
  size_t len, pre_len;
} TranslateJob;

static char *with_header(Lower *C, ShNode *module_op, const HlcText *body, size_t *len) {
  HlcText out = {0};
  module_header(C, &out, module_op);
  hlc_text_put(&out, body->p, body->n);
  if (out.oom) { hlc_text_free(&out); sh_fail_off(C, 0, "out of memory"); }
  *len = out.n;
  return out.p;
}

static void translate_job(Lower *C, void *arg) {
  TranslateJob *j = arg;
  ShNode *module_op;
  collect(C, j->chunk, &module_op);
  Func *f = NULL;
  if (j->entry) {
    f = find_func(C, j->entry, strlen(j->entry));
  } else {
    f = find_func(C, "main", 4);
    if (!f) {
      int pub = 0;
      for (int i = 0; i < C->nfuncs; i++)
        if (C->funcs[i].is_public) { pub++; f = &C->funcs[i]; }
      if (pub != 1) f = NULL;
    }
  }
  if (!f) sh_fail(C, module_op ? module_op : j->chunk->kids, "no entry function (@main, or one public function)");
  lower_func(C, f, true, NULL);
  if (C->module.oom) sh_fail_off(C, 0, "out of memory");
  if (C->par_callee) j->pre = with_header(C, module_op, &C->par_pre, &j->pre_len);
  j->text = with_header(C, module_op, &C->module, &j->len);
}

/* Translate part `chunk` with entry function `entry` (NULL: @main or the only
 * public function) on an R x P grid (0: the module's own). In test mode (t
 * set) the checks, and the steps of an interpreter.run_parallel, go to t.
 * Returns malloc'd HLO text or NULL. */
static char *translate(ShParser *P, ShNode *chunk, const char *entry, ShTest *t, int64_t r, int64_t p,
                       size_t *outlen) {
  Lower *C = calloc(1, sizeof *C);
  if (!C) return NULL;
  lower_init(C, P);
  C->test_mode = t != NULL;
  C->grid_replicas = r;
  C->grid_partitions = p;
  TranslateJob j = {chunk, entry, NULL, NULL, 0, 0};
  if (guarded(C, translate_job, &j) == 0) {
    *outlen = j.len;
    if (t) {
      t->checks = C->nchecks ? malloc(sizeof *t->checks * (size_t)C->nchecks) : NULL;
      if (C->nchecks && t->checks) memcpy(t->checks, C->checks, sizeof *t->checks * (size_t)C->nchecks);
      t->nchecks = t->checks || !C->nchecks ? C->nchecks : 0;
      t->pre = j.pre;
      t->pre_len = j.pre_len;
      j.pre = NULL;
      if (t->pre) {   /* the program of every device, in a module of its own */
        t->par_devices = C->par_replicas * C->par_partitions;
        t->par_nargs = C->par_nargs;
        t->par_nresults = C->par_nresults;
        t->par = translate(P, chunk, C->par_callee, NULL, C->par_replicas, C->par_partitions, &t->par_len);
        if (!t->par) { free(j.text); j.text = NULL; }
      }
    }
  }
  free(j.pre);
  free(C->checks);
  free(C->check_vals);
  lower_done(C);
  free(C);
  return j.text;
}

typedef struct CollectJob { ShNode *chunk; } CollectJob;
static void collect_job(Lower *C, void *arg) {
  ShNode *module_op;
  collect(C, ((CollectJob *)arg)->chunk, &module_op);
}

bool shlo_looks_like_mlir(const char *text, size_t len) {
  size_t i = 0;
  for (;;) {
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) i++;
    if (i + 1 < len && text[i] == '/' && text[i + 1] == '/') {
      while (i < len && text[i] != '\n') i++;
      continue;
    }
    break;
  }
  static const char *const starts[] = {"module", "func.func", "\"func.func\"", "\"builtin.module\"", "#loc", "#"};
  for (size_t k = 0; k < sizeof starts / sizeof *starts; k++) {
    size_t n = strlen(starts[k]);
    if (len - i >= n && memcmp(text + i, starts[k], n) == 0) {
      if (k == 0 && len - i > n && !(text[i + n] == ' ' || text[i + n] == '{' || text[i + n] == '\n' || text[i + n] == '\t'))
        continue;
      return true;
    }
  }
  return false;
}

/* A NUL-terminated copy without interior NULs, or NULL with an error. */
static char *copy_text(const char *text, size_t len, const char *filename, HlcDiags *diags) {
  const char *nul = memchr(text, 0, len);
  if (nul) {
    hlc_diag_at(diags, HLC_ERROR, filename, text, len, (size_t)(nul - text), "NUL byte in the input");
    return NULL;
  }
  char *s = malloc(len + 2);
  if (!s) { hlc_diag(diags, HLC_ERROR, "out of memory"); return NULL; }
  memcpy(s, text, len);
  s[len] = s[len + 1] = 0;
  return s;
}

char *shlo_to_hlo_text(const char *text, size_t len, const char *filename, HlcDiags *diags, size_t *outlen) {
  char *src = copy_text(text, len, filename, diags);
  if (!src) return NULL;
  HlcArena arena;
  hlc_arena_init(&arena);
  ShParser P = {.arena = &arena, .src = src, .len = len, .file = filename, .diags = diags};
  char *out = NULL;
  size_t n = 0;
  if (shp_parse(&P) == 0) {
    if (P.top->nkids != 1) {
      shp_error(&P, P.top->kids->next->tok.off,
                "a file of several modules (\"// -----\") is a test file: run it as one (its checks decide)");
    } else {
      out = translate(&P, P.top->kids, NULL, NULL, 0, 0, &n);
    }
  }
  hlc_arena_free(&arena);
  free(src);
  if (out && outlen) *outlen = n;
  return out;
}

bool shlo_is_test_file(const char *text, size_t len) {
  static const char *const marks[] = {"check.expect_", "// -----", "@check."};
  for (size_t k = 0; k < sizeof marks / sizeof *marks; k++) {
    size_t n = strlen(marks[k]);
    for (size_t i = 0; i + n <= len; i++)
      if (text[i] == marks[k][0] && memcmp(text + i, marks[k], n) == 0) return true;
  }
  return false;
}

static char *render(HlcDiags *d) {
  HlcText b = {0};
  for (int i = 0; i < d->n; i++) hlc_text_puts(&b, d->v[i].text);
  return b.p ? b.p : strdup("translation failed\n");
}

int shlo_tests(const char *text, size_t len, const char *filename, HlcDiags *diags, ShTests *out) {
  memset(out, 0, sizeof *out);
  char *src = copy_text(text, len, filename, diags);
  if (!src) return -1;
  HlcArena arena;
  hlc_arena_init(&arena);
  ShParser P = {.arena = &arena, .src = src, .len = len, .file = filename, .diags = diags};
  int rc = -1;
  if (shp_parse(&P) == 0) {
    rc = 0;
    int cap = 0;
    for (ShNode *chunk = P.top->kids; chunk; chunk = chunk->next) {
      /* the test functions of this part */
      Lower *C = calloc(1, sizeof *C);
      if (!C) break;
      lower_init(C, &P);
      HlcDiags local = {0};
      P.diags = &local;
      CollectJob cj = {chunk};
      bool ok = guarded(C, collect_job, &cj) == 0;
      int nf = ok ? C->nfuncs : 0;
      char **names = calloc((size_t)nf + 1, sizeof *names);
      int *lines = calloc((size_t)nf + 1, sizeof *lines);
      int nt = 0;
      for (int i = 0; i < nf && names && lines; i++) {
        Func *f = &C->funcs[i];
        if (!f->is_public || f->nargs) continue;
        names[nt] = strndup(f->name, f->nlen);
        int col;
        hlc_line_col(src, len, f->op->tok.off, &lines[nt], &col);
        nt++;
      }
      if (!ok) {   /* the part as a whole fails */
        names[0] = NULL;
        nt = -1;
      }
      lower_done(C);
      free(C);
      for (int i = 0; i < (nt < 0 ? 1 : nt); i++) {
        if (out->n == cap) {
          cap = cap ? cap * 2 : 16;
          ShTest *v = realloc(out->v, sizeof *v * (size_t)cap);
          if (!v) break;
          out->v = v;
        }
        ShTest *t = &out->v[out->n++];
        memset(t, 0, sizeof *t);
        if (nt < 0) {
          int line, col;
          hlc_line_col(src, len, chunk->kids ? chunk->kids->tok.off : 0, &line, &col);
          t->func = strdup("<part>");
          t->line = line;
          t->error = render(&local);
          continue;
        }
        t->func = names[i];
        names[i] = NULL;
        t->line = lines[i];
        HlcDiags d = {0};
        P.diags = &d;
        t->hlo = translate(&P, chunk, t->func, t, 0, 0, &t->hlo_len);
        if (!t->hlo) t->error = render(&d);
        hlc_diags_clear(&d);
      }
      for (int i = 0; i < nf && names; i++) free(names[i]);
      free(names);
      free(lines);
      hlc_diags_clear(&local);
      P.diags = diags;
    }
  }
  hlc_arena_free(&arena);
  free(src);
  return rc;
}

void shlo_tests_free(ShTests *t) {
  for (int i = 0; i < t->n; i++) {
    free(t->v[i].func);
    free(t->v[i].hlo);
    free(t->v[i].error);
    free(t->v[i].checks);
    free(t->v[i].pre);
    free(t->v[i].par);
  }
  free(t->v);
  memset(t, 0, sizeof *t);
}

HloModule *shlo_parse_module(const char *text, size_t len, const char *filename, HlcDiags *diags) {
  size_t n = 0;
  char *hlo = shlo_to_hlo_text(text, len, filename, diags, &n);
  if (!hlo) return NULL;
  char *name = malloc(strlen(filename) + 32);
  if (!name) { free(hlo); return NULL; }
  sprintf(name, "%s (as HLO)", filename);
  HloModule *m = hlp_parse(hlo, n, name, diags);
  free(name);
  free(hlo);
  return m;
}

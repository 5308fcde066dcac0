/* registry.c: target name -> handler, and running a custom call.
 *
 * Targets come from three places: built-ins (builtins.c, typed FFI handlers
 * registered when the registry is made), --custom-call bindings (a dlsym'd
 * symbol, called as a typed FFI execute handler or with a legacy convention
 * as the instruction's api_version says) and --plugin libraries (bundles
 * registered through XLA_FFI_Handler_Register). A later registration of a
 * name replaces an earlier one.
 *
 * Call sites (one per custom-call instruction of a module) hold the decoded
 * attributes and the per-stage states. For a typed FFI handler, the first
 * execution of a site runs its instantiate stage (no buffers, attributes
 * only); every execution then runs execute with the buffers, as XLA:CPU
 * does, or with hlf_set_all_stages prepare, initialize (when the bundle has
 * them) and execute, as XLA:GPU does. Prepare/initialize/execute states live
 * for one execution; the instantiate state lives with the site.
 *
 * Each handler's API version is asked once (metadata query) before its first
 * call, and the handler gets the API table of its generation.
 * Not here: frames (callframe.c), API functions (api.c), legacy calls
 * (legacy.c), attribute syntax (attrs.c).
 */
#include "ffi/internal.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- Registry ------------------------------------------------------------ */

HlfRegistry *hlf_registry_new(void) {
  HlfRegistry *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  pthread_mutex_init(&r->mu, NULL);
  r->members_all = -1;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  r->nthreads = n < 1 ? 1 : n > 16 ? 16 : (int)n;
  hlf_register_builtins(r);
  return r;
}

static void free_site(HlfSite *s) {
  for (int i = 0; i < 4; i++) hlf_state_clear(&s->states[i]);
  hlc_arena_free(&s->arena);
  free(s);
}

static void free_target(HlfTarget *t) {
  free(t->name);
  free(t->origin);
  free(t->query_error);
  free(t);
}

void hlf_registry_free(HlfRegistry *r) {
  if (!r) return;
  hlf_pool_free(r->pool);   /* first: queued tasks may still use plugin code */
  for (int b = 0; b < HLF_SITE_BUCKETS; b++)
    for (HlfSite *s = r->sites[b], *n; s; s = n) { n = s->next; free_site(s); }
  for (HlfTarget *t = r->targets, *n; t; t = n) { n = t->next; free_target(t); }
  for (struct HlfMembersOpt *o = r->members, *n; o; o = n) { n = o->next; free(o->target); free(o); }
  for (int i = 0; i < r->nlibs; i++) dlclose(r->libs[i]);
  free(r->libs);
  free(r->user);
  pthread_mutex_destroy(&r->mu);
  free(r);
}

void hlf_registry_after_fork(HlfRegistry *r) {
  pthread_mutex_init(&r->mu, NULL);
  r->pool = NULL;   /* the parent's; leaked in the child on purpose */
}

void hlf_set_num_threads(HlfRegistry *r, int n) {
  pthread_mutex_lock(&r->mu);
  r->nthreads = n < 1 ? 1 : n;
  pthread_mutex_unlock(&r->mu);
}

void hlf_set_run_id(HlfRegistry *r, int64_t run_id) { r->run_id = run_id; }

int hlf_set_user_data(HlfRegistry *r, int64_t type_id, void *data) {
  int rc = 0;
  pthread_mutex_lock(&r->mu);
  int i = 0;
  while (i < r->nuser && r->user[i].type_id != type_id) i++;
  if (i == r->nuser) {
    void *v = realloc(r->user, (size_t)(r->nuser + 1) * sizeof *r->user);
    if (!v) rc = -1;
    else { r->user = v; r->nuser++; }
  }
  if (!rc) { r->user[i].type_id = type_id; r->user[i].data = data; }
  pthread_mutex_unlock(&r->mu);
  return rc;
}

/* ---- Targets ------------------------------------------------------------- */

static HlfTarget *find_locked(HlfRegistry *r, const char *name, size_t n) {
  for (HlfTarget *t = r->targets; t; t = t->next)
    if (strlen(t->name) == n && memcmp(t->name, name, n) == 0) return t;
  return NULL;
}

HlfTarget *hlf_find_target(HlfRegistry *r, const char *name) {
  pthread_mutex_lock(&r->mu);
  HlfTarget *t = find_locked(r, name, strlen(name));
  pthread_mutex_unlock(&r->mu);
  return t;
}

static int add_target(HlfRegistry *r, const char *name, size_t n, HlfSource src,
                      const XLA_FFI_Handler_Bundle *b, void *symbol, uint32_t traits,
                      const char *origin) {
  HlfTarget *t = calloc(1, sizeof *t);
  if (!t) return -1;
  t->name = strndup(name, n);
  t->origin = strdup(origin);
  if (!t->name || !t->origin) { free_target(t); return -1; }
  t->source = src;
  t->bundle = *b;
  t->symbol = symbol;
  t->traits = traits;
  pthread_mutex_lock(&r->mu);
  /* Replace: unlink the old entry. Sites keep no pointer to targets, and
   * call sites of the old handler's states are deleted with their sites. */
  for (HlfTarget **pp = &r->targets; *pp; pp = &(*pp)->next)
    if (strlen((*pp)->name) == n && memcmp((*pp)->name, name, n) == 0) {
      HlfTarget *old = *pp;
      *pp = old->next;
      free_target(old);
      break;
    }
  t->next = r->targets;
  r->targets = t;
  pthread_mutex_unlock(&r->mu);
  return 0;
}

int hlf_register_bundle(HlfRegistry *r, const char *name, size_t name_len,
                        const XLA_FFI_Handler_Bundle *b, uint32_t traits, HlfSource src,
                        const char *origin) {
  return add_target(r, name, name_len, src, b, NULL, traits, origin);
}

int hlf_register_handler(HlfRegistry *r, const char *target,
                         const struct XLA_FFI_Handler_Bundle *bundle, const char *origin) {
  return hlf_register_bundle(r, target, strlen(target), bundle, 0, HLF_SRC_PLUGIN,
                             origin ? origin : "registered handler");
}

char *hlf_binding_text(HlfRegistry *r, const char *target) {
  /* Copied under the lock: a later binding of the target frees the entry. */
  pthread_mutex_lock(&r->mu);
  HlfTarget *t = find_locked(r, target, strlen(target));
  char *s = t ? strdup(t->origin) : NULL;
  pthread_mutex_unlock(&r->mu);
  return s;
}

/* dlopen that also finds a bare "x.so" in the current directory, which is
 * what a user typing --custom-call t=x.so means. */
static void *open_lib(HlfRegistry *r, const char *path, HlcDiags *d) {
  char *local = NULL;
  if (!strchr(path, '/') && access(path, F_OK) == 0) local = hlf_strdup_printf("./%s", path);
  dlerror();
  /* Static initialisers may register handlers while the library loads
   * (XLA_FFI_REGISTER_HANDLER with xla::ffi::GetXlaFfiApi()). */
  hlf_set_registering(r);
  void *h = dlopen(local ? local : path, RTLD_NOW | RTLD_LOCAL);
  hlf_set_registering(NULL);
  free(local);
  if (!h) {
    const char *e = dlerror();
    hlc_diag(d, HLC_ERROR, "cannot load %s: %s", path, e ? e : "unknown error");
    return NULL;
  }
  pthread_mutex_lock(&r->mu);
  if (r->nlibs == r->caplibs) {
    int cap = r->caplibs ? 2 * r->caplibs : 4;
    void **v = realloc(r->libs, (size_t)cap * sizeof *v);
    if (!v) {
      pthread_mutex_unlock(&r->mu);
      dlclose(h);
      hlc_diag(d, HLC_ERROR, "out of memory");
      return NULL;
    }
    r->libs = v;
    r->caplibs = cap;
  }
  r->libs[r->nlibs++] = h;
  pthread_mutex_unlock(&r->mu);
  return h;
}

int hlf_bind(HlfRegistry *r, const char *target, const char *lib_path, const char *symbol,
             HlcDiags *d) {
  if (!target || !*target) {
    hlc_diag(d, HLC_ERROR, "--custom-call: empty target name (expected TARGET=LIB.so[:SYMBOL])");
    return -1;
  }
  if (!lib_path || !*lib_path) {
    hlc_diag(d, HLC_ERROR, "--custom-call %s: no library (expected TARGET=LIB.so[:SYMBOL])", target);
    return -1;
  }
  const char *sym = symbol && *symbol ? symbol : target;
  void *h = open_lib(r, lib_path, d);
  if (!h) return -1;
  dlerror();
  void *fn = dlsym(h, sym);
  if (!fn) {
    hlc_diag(d, HLC_ERROR, "--custom-call %s: %s has no symbol '%s'", target, lib_path, sym);
    return -1;
  }
  char *origin = hlf_strdup_printf("%s:%s", lib_path, sym);
  XLA_FFI_Handler_Bundle b = {NULL, NULL, NULL, (XLA_FFI_Handler *)fn};
  int rc = origin ? add_target(r, target, strlen(target), HLF_SRC_SYMBOL, &b, fn, 0, origin) : -1;
  free(origin);
  if (rc) hlc_diag(d, HLC_ERROR, "out of memory");
  return rc;
}

typedef XLA_FFI_Error *HlfPluginInit(const XLA_FFI_Api *api);

int hlf_load_plugin(HlfRegistry *r, const char *lib_path, const char *function, HlcDiags *d) {
  const char *fn = function && *function ? function : HLF_PLUGIN_DEFAULT_FUNCTION;
  int before = __atomic_load_n(&r->nregistered, __ATOMIC_RELAXED);
  void *h = open_lib(r, lib_path, d);
  if (!h) return -1;
  bool at_load = __atomic_load_n(&r->nregistered, __ATOMIC_RELAXED) > before;
  dlerror();
  HlfPluginInit *init;
  *(void **)&init = dlsym(h, fn);
  if (!init && at_load && !(function && *function))
    return 0;   /* registered its handlers while loading (XLA_FFI_REGISTER_HANDLER) */
  if (!init) {
    hlc_diag(d, HLC_ERROR, "--plugin %s: no registration function '%s' and no handler "
             "registered while loading (give the function with --plugin %s:FUNCTION)",
             lib_path, fn, lib_path);
    return -1;
  }
  hlf_set_registering(r);
  XLA_FFI_Error *e = init(hlf_api(0));
  hlf_set_registering(NULL);
  if (e) {
    hlc_diag(d, HLC_ERROR, "--plugin %s: %s failed: %s", lib_path, fn, e->message);
    hlf_error_free(e);
    return -1;
  }
  return 0;
}

int hlf_set_members_opt_in(HlfRegistry *r, const char *target, bool on) {
  pthread_mutex_lock(&r->mu);
  int rc = 0;
  if (!target) {
    r->members_all = on;
    /* "all" overrides earlier per-target choices */
    for (struct HlfMembersOpt *o = r->members; o; o = o->next) o->on = on;
  } else {
    struct HlfMembersOpt *o = r->members;
    while (o && strcmp(o->target, target) != 0) o = o->next;
    if (!o && (o = calloc(1, sizeof *o)) && (o->target = strdup(target))) {
      o->next = r->members;
      r->members = o;
    } else if (o && !o->target) {
      free(o);
      o = NULL;
    }
    if (o) o->on = on; else rc = -1;
  }
  pthread_mutex_unlock(&r->mu);
  return rc;
}

void hlf_set_all_stages(HlfRegistry *r, bool all_stages) {
  pthread_mutex_lock(&r->mu);
  r->all_stages = all_stages;
  pthread_mutex_unlock(&r->mu);
}

bool hlf_members_wanted(HlfRegistry *r, const char *target) {
  pthread_mutex_lock(&r->mu);
  bool on = r->members_all == 1;
  for (struct HlfMembersOpt *o = r->members; o; o = o->next)
    if (strcmp(o->target, target) == 0) on = o->on;
  pthread_mutex_unlock(&r->mu);
  return on;
}

/* ---- Call sites ---------------------------------------------------------- */

static unsigned bucket(const HloInstr *ins) {
  uintptr_t p = (uintptr_t)ins;
  return (unsigned)((p >> 4) ^ (p >> 12)) % HLF_SITE_BUCKETS;
}

static HlfSite *get_site(HlfRegistry *r, const HloModule *m, const HloInstr *ins) {
  unsigned b = bucket(ins);
  pthread_mutex_lock(&r->mu);
  HlfSite *s = r->sites[b];
  while (s && !(s->ins == ins && s->m == m)) s = s->next;
  if (!s && (s = calloc(1, sizeof *s))) {
    s->m = m;
    s->ins = ins;
    hlc_arena_init(&s->arena);
    s->next = r->sites[b];
    r->sites[b] = s;
  }
  pthread_mutex_unlock(&r->mu);
  return s;
}

void hlf_release_module(HlfRegistry *r, const HloModule *m) {
  pthread_mutex_lock(&r->mu);
  for (int b = 0; b < HLF_SITE_BUCKETS; b++)
    for (HlfSite **pp = &r->sites[b]; *pp;) {
      HlfSite *s = *pp;
      if (s->m == m) { *pp = s->next; free_site(s); }
      else pp = &s->next;
    }
  pthread_mutex_unlock(&r->mu);
}

/* ---- Checking ------------------------------------------------------------ */

static const char *api_name(int v) {
  switch (v) {
  case HLO_API_ORIGINAL: return "API_VERSION_ORIGINAL";
  case HLO_API_STATUS_RETURNING: return "API_VERSION_STATUS_RETURNING";
  case HLO_API_STATUS_RETURNING_UNIFIED: return "API_VERSION_STATUS_RETURNING_UNIFIED";
  case HLO_API_TYPED_FFI: return "API_VERSION_TYPED_FFI";
  default: return "API_VERSION_UNSPECIFIED";
  }
}
const char *hlf_api_version_name(int v);
const char *hlf_api_version_name(int v) { return api_name(v); }

/* Does the target run through the typed FFI path for this instruction? */
static bool typed(const HlfTarget *t, const HloInstr *ins) {
  return t->source != HLF_SRC_SYMBOL || ins->api_version == HLO_API_TYPED_FFI;
}

/* Metadata query, once per target. */
int hlf_target_query(HlfTarget *t, char **err) {
  if (!t->queried) {
    int major = 0, minor = 0;
    uint32_t traits = 0;
    char *qe = NULL;
    if (hlf_query_metadata(t->bundle.execute, &major, &minor, &traits, &qe) == 0) {
      if (major != 0 || minor < 1 || minor > 3)
        qe = hlf_strdup_printf("unsupported XLA FFI API version %d.%d; hlorun supports 0.1-0.3%s",
                               major, minor,
                               major == 0 && minor == 0
                                   ? " (the handler left its version unset: does it answer the "
                                     "metadata query?)" : "");
      t->major = major;
      t->minor = minor;
      t->traits |= traits;
    }
    t->query_error = qe;
    t->queried = true;
  }
  if (t->query_error) {
    *err = hlf_strdup_printf("FFI handler of custom-call target \"%s\" (%s) %s", t->name,
                             t->origin, t->query_error);
    return -1;
  }
  return 0;
}

/* Decode the site's attributes once. On error *err and *src_off (offset in
 * the module source). */
static int site_attrs(HlfRegistry *r, const HlfTarget *t, HlfSite *s, const HloModule *m,
                      const HloInstr *ins, char **err, size_t *src_off) {
  if (s->parsed) return 0;
  size_t eo;
  char *msg;
  bool json = t->traits & HLORUN_FFI_TRAIT_JSON_CONFIG;
  if (json) {
    /* The handler decodes the JSON itself, from the members. */
    memset(&s->attrs, 0, sizeof s->attrs);
    s->attrs.type = XLA_FFI_AttrType_DICTIONARY;
  } else if (hlf_attrs_parse(&s->arena, ins->backend_config, ins->backend_config_len, &s->attrs,
                             &eo, &msg)) {
    *src_off = hlf_config_source_offset(m, ins, eo);
    *err = msg;
    return -1;
  }
  if (json || (t->traits & HLORUN_FFI_TRAIT_INSTRUCTION_MEMBERS) ||
      hlf_members_wanted(r, ins->custom_call_target)) {
    HlfAttr mem;
    if (hlf_members_attr(&s->arena, ins, &mem) ||
        (json && hlf_members_add_config(&s->arena, &mem, ins)) ||
        hlf_attrs_insert(&s->arena, &s->attrs, &mem)) {
      *err = hlf_strdup_printf("backend_config already has an attribute named %s (reserved for "
                               "the instruction's members)", HLORUN_FFI_INSTRUCTION_ATTR);
      *src_off = ins->off;
      return -1;
    }
  }
  s->ffi_attrs = hlf_attrs_to_ffi(&s->arena, &s->attrs);
  if (!s->ffi_attrs) { *err = strdup("out of memory"); *src_off = ins->off; return -1; }
  s->parsed = true;
  return 0;
}

static char *handler_failed(const HlfTarget *t, int stage, XLA_FFI_Error *e);

/* Run the site's instantiate stage once (mem: see HlfMemHook; may be NULL). */
static int instantiate_site(HlfRegistry *r, const HlfTarget *t, HlfSite *s,
                            const HlfMemHook *mem, char **err) {
  if (s->instantiated) return 0;
  XLA_FFI_ExecutionContext ctx = {HLF_CTX_MAGIC, r, s, XLA_FFI_ExecutionStage_INSTANTIATE,
                                  t->minor, mem, NULL};
  XLA_FFI_Error *e = NULL;
  if (t->bundle.instantiate)
    e = hlf_invoke(t->bundle.instantiate, &ctx, NULL, 0, NULL, 0, s->ffi_attrs);
  if (e) { *err = handler_failed(t, ctx.stage, e); return -1; }
  s->instantiated = true;
  return 0;
}

/* The common checks; *src_off is SIZE_MAX unless the error has a position
 * inside backend_config. */
static int check_site(HlfRegistry *r, const HloModule *m, const HloInstr *ins, HlfTarget **tp,
                      HlfSite **sp, char **err, size_t *src_off) {
  *src_off = SIZE_MAX;
  const char *name = ins->custom_call_target ? ins->custom_call_target : "";
  HlfTarget *t = hlf_find_target(r, name);
  if (!t) {
    *err = hlf_strdup_printf("custom-call target \"%s\" (line %d) has no handler; bind one with "
                             "--custom-call %s=LIB.so[:SYMBOL] or load a plugin that registers "
                             "it with --plugin LIB.so[:FUNCTION]", name, (int)ins->line, name);
    return -1;
  }
  int v = ins->api_version;
  if (v < HLO_API_ORIGINAL || v > HLO_API_TYPED_FFI) {
    *err = hlf_strdup_printf("custom-call target \"%s\": api_version %d is not callable", name, v);
    return -1;
  }
  if (t->source == HLF_SRC_PLUGIN && v != HLO_API_TYPED_FFI) {
    *err = hlf_strdup_printf("custom-call target \"%s\" is a typed FFI handler registered by a "
                             "plugin, but the instruction has api_version=%s (a legacy function "
                             "must be bound with --custom-call %s=LIB.so[:SYMBOL])",
                             name, api_name(v), name);
    return -1;
  }
  *tp = t;
  if (!typed(t, ins)) return 0;
  if (hlf_target_query(t, err)) return -1;
  HlfSite *s = get_site(r, m, ins);
  if (!s) { *err = strdup("out of memory"); return -1; }
  *sp = s;
  if (site_attrs(r, t, s, m, ins, err, src_off)) return -1;
  /* A JSON-config handler validates its config against the shapes when it
   * instantiates: do that now, before anything runs. */
  if (t->traits & HLORUN_FFI_TRAIT_JSON_CONFIG) return instantiate_site(r, t, s, NULL, err);
  return 0;
}

static char *with_position(const HloModule *m, size_t off, char *msg) {
  if (off == SIZE_MAX || !m || !m->source) return msg;
  int line, col;
  hlc_line_col(m->source, m->source_len, off, &line, &col);
  char *s = hlf_strdup_printf("malformed backend_config at %d:%d: %s", line, col, msg);
  if (!s) return msg;
  free(msg);
  return s;
}

int hlf_check(HlfRegistry *r, const HloModule *m, const HloInstr *ins, char **err) {
  HlfTarget *t = NULL;
  HlfSite *s = NULL;
  size_t off;
  *err = NULL;
  if (check_site(r, m, ins, &t, &s, err, &off) == 0) return 0;
  *err = with_position(m, off, *err);
  return -1;
}

int hlf_check_module(HlfRegistry *r, const HloModule *m, HlcDiags *d) {
  int rc = 0;
  /* A custom call in a computation nothing calls never runs: it needs no
   * handler (XLA drops such computations). Without an ENTRY, all count. */
  const HloComputation *entry = m->entry;
  bool *live = entry ? hlp_reachable(m, &entry, 1) : NULL;
  if (entry && !live) { hlc_diag(d, HLC_ERROR, "out of memory"); return -1; }
  for (int32_t c = 0; c < m->ncomps; c++)
    for (int32_t i = 0; (!live || live[c]) && i < m->comps[c]->ninstrs; i++) {
      const HloInstr *ins = m->comps[c]->instrs[i];
      if (ins->op != HLO_OP_CUSTOM_CALL) continue;
      HlfTarget *t = NULL;
      HlfSite *s = NULL;
      char *err = NULL;
      size_t off;
      if (check_site(r, m, ins, &t, &s, &err, &off) == 0) continue;
      hlc_diag_at(d, HLC_ERROR, m->filename, m->source, m->source_len,
                  off == SIZE_MAX ? ins->off : off, "%s", err ? err : "out of memory");
      free(err);
      rc = -1;
    }
  free(live);
  return rc;
}

/* ---- Calling ------------------------------------------------------------- */

static char *handler_failed(const HlfTarget *t, int stage, XLA_FFI_Error *e) {
  static const char *const names[] = {"instantiate", "prepare", "initialize", "execute"};
  char *s = stage == XLA_FFI_ExecutionStage_EXECUTE
                ? hlf_strdup_printf("handler of custom-call target \"%s\" failed: %s", t->name,
                                    e->message)
                : hlf_strdup_printf("handler of custom-call target \"%s\" failed in its %s "
                                    "stage: %s", t->name, names[stage], e->message);
  hlf_error_free(e);
  return s ? s : strdup("out of memory");
}

int hlf_call(HlfRegistry *r, const HloModule *m, const HloInstr *ins, const HlfBuf *args,
             int32_t nargs, const HlfBuf *rets, int32_t nrets, char **err) {
  return hlf_call_hooked(r, m, ins, args, nargs, rets, nrets, NULL, err);
}

int hlf_call_hooked(HlfRegistry *r, const HloModule *m, const HloInstr *ins, const HlfBuf *args,
                    int32_t nargs, const HlfBuf *rets, int32_t nrets, const HlfMemHook *mem,
                    char **err) {
  HlfTarget *t = NULL;
  HlfSite *s = NULL;
  size_t off;
  *err = NULL;
  if (check_site(r, m, ins, &t, &s, err, &off)) {
    *err = with_position(m, off, *err);
    return -1;
  }
  if (!typed(t, ins))
    return hlf_call_legacy(t->symbol, ins->api_version, ins, args, nargs, rets, nrets, err);

  if (instantiate_site(r, t, s, mem, err)) return -1;
  XLA_FFI_ExecutionContext ctx = {HLF_CTX_MAGIC, r, s, XLA_FFI_ExecutionStage_INSTANTIATE,
                                  t->minor, mem, NULL};
  XLA_FFI_Error *e = NULL;
  pthread_mutex_lock(&r->mu);
  bool all = r->all_stages;
  pthread_mutex_unlock(&r->mu);
  XLA_FFI_Handler *stages[3] = {all ? t->bundle.prepare : NULL, all ? t->bundle.initialize : NULL,
                                t->bundle.execute};
  for (int i = 0; i < 3 && !e; i++) {
    if (!stages[i]) continue;
    ctx.stage = (XLA_FFI_ExecutionStage)(XLA_FFI_ExecutionStage_PREPARE + i);
    e = hlf_invoke(stages[i], &ctx, args, nargs, rets, nrets, s->ffi_attrs);
  }
  for (int i = XLA_FFI_ExecutionStage_PREPARE; i <= XLA_FFI_ExecutionStage_EXECUTE; i++)
    hlf_state_clear(&s->states[i]);
  if (e) { *err = handler_failed(t, ctx.stage, e); return -1; }
  return 0;
}

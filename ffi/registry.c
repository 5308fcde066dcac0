/* registry.c: which handler a custom-call target name means, and the call
 * sites. Targets come from three places: built-ins (the target families of
 * targets/, registered when a context is made), --custom-call bindings and
 * --plugin libraries (load.c). A later registration of a name replaces an
 * earlier one. Call sites (one per custom-call instruction of a module)
 * hold the decoded attributes and the per-stage states. The registry also
 * owns the host's settings (host.c) and the libraries the targets' code
 * lives in, and frees them with itself.
 * Not here: calling a target (call.c), loading libraries (load.c), the API
 * table (api.c).
 */
#include "ffi/internal.h"
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* ---- Registry ------------------------------------------------------------ */

HlfRegistry *hlf_registry_new(void) {
  HlfRegistry *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  pthread_mutex_init(&r->mu, NULL);
  hlf_host_init(&r->host);
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
  hlf_host_free(&r->host);   /* first: its pool's queued tasks may still use plugin code */
  for (int b = 0; b < HLF_SITE_BUCKETS; b++)
    for (HlfSite *s = r->sites[b], *n; s; s = n) { n = s->next; free_site(s); }
  for (HlfTarget *t = r->targets, *n; t; t = n) { n = t->next; free_target(t); }
  for (int i = 0; i < r->nlibs; i++) dlclose(r->libs[i]);
  free(r->libs);
  pthread_mutex_destroy(&r->mu);
  free(r);
}

void hlf_registry_after_fork(HlfRegistry *r) {
  pthread_mutex_init(&r->mu, NULL);
  hlf_host_after_fork(&r->host);
}

int hlf_registry_keep_library(HlfRegistry *r, void *handle) {
  pthread_mutex_lock(&r->mu);
  if (r->nlibs == r->caplibs) {
    int cap = r->caplibs ? 2 * r->caplibs : 4;
    void **v = realloc(r->libs, (size_t)cap * sizeof *v);
    if (!v) {
      pthread_mutex_unlock(&r->mu);
      return -1;
    }
    r->libs = v;
    r->caplibs = cap;
  }
  r->libs[r->nlibs++] = handle;
  pthread_mutex_unlock(&r->mu);
  return 0;
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

int hlf_add_target(HlfRegistry *r, const char *name, size_t n, HlfSource src,
                   const XLA_FFI_Handler_Bundle *b, void *symbol, uint32_t traits,
                   HlfScratchFn *scratch, const char *origin) {
  HlfTarget *t = calloc(1, sizeof *t);
  if (!t) return -1;
  t->name = strndup(name, n);
  t->origin = strdup(origin);
  if (!t->name || !t->origin) { free_target(t); return -1; }
  t->source = src;
  t->bundle = *b;
  t->symbol = symbol;
  t->traits = traits;
  t->scratch = scratch;
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
  return hlf_add_target(r, name, name_len, src, b, NULL, traits, NULL, origin);
}

int hlf_register_builtin(HlfRegistry *r, const char *target,
                         const struct XLA_FFI_Handler_Bundle *bundle, const char *origin) {
  return hlf_register_builtin_scratch(r, target, bundle, origin, NULL);
}

int hlf_register_builtin_scratch(HlfRegistry *r, const char *target,
                                 const struct XLA_FFI_Handler_Bundle *bundle, const char *origin,
                                 HlfScratchFn *scratch) {
  return hlf_add_target(r, target, strlen(target), HLF_SRC_BUILTIN, bundle, NULL, 0, scratch,
                        origin ? origin : "built-in");
}

void hlf_builtin_api_versions(HlfRegistry *r, const char *target, unsigned mask) {
  pthread_mutex_lock(&r->mu);
  HlfTarget *t = find_locked(r, target, strlen(target));
  if (t && t->source == HLF_SRC_BUILTIN) t->api_mask = mask;
  pthread_mutex_unlock(&r->mu);
}

size_t hlf_builtin_scratch(HlfRegistry *r, const HloInstr *ins, const HlfBuf *args,
                           int32_t nargs) {
  const char *name = ins->custom_call_target;
  if (!name) return 0;
  pthread_mutex_lock(&r->mu);
  HlfTarget *t = find_locked(r, name, strlen(name));
  /* Only built-ins register a scratch size: a user's handler that replaced
   * one (a new entry) allocates what it likes. */
  HlfScratchFn *scratch = t ? t->scratch : NULL;
  pthread_mutex_unlock(&r->mu);
  return scratch ? scratch(args, nargs) : 0;
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

/* ---- Call sites ---------------------------------------------------------- */

static unsigned bucket(const HloInstr *ins) {
  uintptr_t p = (uintptr_t)ins;
  return (unsigned)((p >> 4) ^ (p >> 12)) % HLF_SITE_BUCKETS;
}

HlfSite *hlf_site_get(HlfRegistry *r, const HloModule *m, const HloInstr *ins) {
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


/* load.c: the top of ffi/: loading handler libraries. --custom-call
 * TARGET=LIB.so[:SYMBOL] binds a dlsym'd symbol (called as a typed FFI
 * execute handler or with a legacy convention, as the instruction's
 * api_version says); --plugin LIB.so[:FUNCTION] runs a registration
 * function that registers bundles through XLA_FFI_Handler_Register, or
 * takes the handlers the library registered while it loaded. Registrations
 * reach the registry through a registrar set here around the loading (the
 * API table, below, never names the registry). The libraries stay open
 * until the registry is freed.
 * Not here: the registry (registry.c), the API table (api.c). */
#include "ffi/internal.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The registrar of one loading: registrations go into r as a plugin's,
 * counted. */
typedef struct Registrar {
  HlfRegistrar base;
  HlfRegistry *r;
  int count;
} Registrar;

static int add_registered(HlfRegistrar *self, const char *name, size_t name_len,
                          const XLA_FFI_Handler_Bundle *b, uint32_t traits, const char *origin) {
  Registrar *reg = (Registrar *)self;
  int rc = hlf_register_bundle(reg->r, name, name_len, b, traits, HLF_SRC_PLUGIN, origin);
  if (!rc) reg->count++;
  return rc;
}

/* dlopen that also finds a bare "x.so" in the current directory, which is
 * what a user typing --custom-call t=x.so means. */
static void *open_lib(HlfRegistry *r, const char *path, int *nregistered, HlcDiags *d) {
  char *local = NULL;
  if (!strchr(path, '/') && access(path, F_OK) == 0) local = hlf_strdup_printf("./%s", path);
  dlerror();
  /* Static initialisers may register handlers while the library loads
   * (XLA_FFI_REGISTER_HANDLER with xla::ffi::GetXlaFfiApi()). */
  Registrar reg = {{add_registered}, r, 0};
  hlf_set_registrar(&reg.base);
  void *h = dlopen(local ? local : path, RTLD_NOW | RTLD_LOCAL);
  hlf_set_registrar(NULL);
  if (nregistered) *nregistered = reg.count;
  free(local);
  if (!h) {
    const char *e = dlerror();
    hlc_diag(d, HLC_ERROR, "cannot load %s: %s", path, e ? e : "unknown error");
    return NULL;
  }
  if (hlf_registry_keep_library(r, h)) {
    dlclose(h);
    hlc_diag(d, HLC_ERROR, "out of memory");
    return NULL;
  }
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
  void *h = open_lib(r, lib_path, NULL, d);
  if (!h) return -1;
  dlerror();
  void *fn = dlsym(h, sym);
  if (!fn) {
    hlc_diag(d, HLC_ERROR, "--custom-call %s: %s has no symbol '%s'", target, lib_path, sym);
    return -1;
  }
  char *origin = hlf_strdup_printf("%s:%s", lib_path, sym);
  XLA_FFI_Handler_Bundle b = {NULL, NULL, NULL, (XLA_FFI_Handler *)fn};
  int rc = origin ? hlf_add_target(r, target, strlen(target), HLF_SRC_SYMBOL, &b, fn, 0, NULL,
                                   origin) : -1;
  free(origin);
  if (rc) hlc_diag(d, HLC_ERROR, "out of memory");
  return rc;
}

typedef XLA_FFI_Error *HlfPluginInit(const XLA_FFI_Api *api);

int hlf_load_plugin(HlfRegistry *r, const char *lib_path, const char *function, HlcDiags *d) {
  const char *fn = function && *function ? function : HLF_PLUGIN_DEFAULT_FUNCTION;
  int at_load = 0;
  void *h = open_lib(r, lib_path, &at_load, d);
  if (!h) return -1;
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
  Registrar reg = {{add_registered}, r, 0};
  hlf_set_registrar(&reg.base);
  XLA_FFI_Error *e = init(hlf_api(0));
  hlf_set_registrar(NULL);
  if (e) {
    hlc_diag(d, HLC_ERROR, "--plugin %s: %s failed: %s", lib_path, fn, e->message);
    hlf_error_free(e);
    return -1;
  }
  return 0;
}

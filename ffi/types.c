/* types.c: the FFI type registry, process-wide like XLA's: a type's name
 * gets one id for the life of the process (a preset id is kept unless it
 * is taken), with the deleter of its values; and deleting a call site's
 * state with its own deleter or its type's.
 * Not here: the API functions that reach these (Type_Register, State_Set,
 * State_Get: api.c), the call sites that hold states (registry.c). */
#include "ffi/internal.h"
#include <stdlib.h>
#include <string.h>

typedef struct TypeEntry { char *name; int64_t id; void (*deleter)(void *); } TypeEntry;
static pthread_mutex_t types_mu = PTHREAD_MUTEX_INITIALIZER;
static TypeEntry *types;
static int ntypes, captypes;
static int64_t next_type_id = 1;

int64_t hlf_type_id(const char *name) {
  int64_t id = 0;
  pthread_mutex_lock(&types_mu);
  for (int i = 0; i < ntypes; i++)
    if (strcmp(types[i].name, name) == 0) id = types[i].id;
  pthread_mutex_unlock(&types_mu);
  return id;
}

static void (*type_deleter(int64_t id))(void *) {
  void (*d)(void *) = NULL;
  pthread_mutex_lock(&types_mu);
  for (int i = 0; i < ntypes; i++)
    if (types[i].id == id) d = types[i].deleter;
  pthread_mutex_unlock(&types_mu);
  return d;
}

/* Same name again: the same id (the deleter is updated). A preset id must
 * not collide with another name's. */
XLA_FFI_Error *hlf_type_register(XLA_FFI_ByteSpan name, XLA_FFI_TypeId *tid,
                                 void (*deleter)(void *)) {
  if (!tid) return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "Type_Register: NULL type_id");
  if (!name.ptr && name.len)
    return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "Type_Register: NULL name");
  XLA_FFI_Error *err = NULL;
  pthread_mutex_lock(&types_mu);
  TypeEntry *same = NULL;
  for (int i = 0; i < ntypes; i++) {
    if (strlen(types[i].name) == name.len && memcmp(types[i].name, name.ptr, name.len) == 0)
      same = &types[i];
    else if (tid->type_id != 0 && types[i].id == tid->type_id)
      err = hlf_error(XLA_FFI_Error_Code_ALREADY_EXISTS,
                      "Type_Register: type id %lld is already used by type %s",
                      (long long)tid->type_id, types[i].name);
  }
  if (!err && same) {
    if (tid->type_id != 0 && tid->type_id != same->id)
      err = hlf_error(XLA_FFI_Error_Code_ALREADY_EXISTS,
                      "Type_Register: type %s is already registered with id %lld", same->name,
                      (long long)same->id);
    else {
      tid->type_id = same->id;
      if (deleter) same->deleter = deleter;
    }
  } else if (!err) {
    if (ntypes == captypes) {
      int cap = captypes ? 2 * captypes : 16;
      TypeEntry *v = realloc(types, (size_t)cap * sizeof *v);
      if (!v) goto oom;
      types = v;
      captypes = cap;
    }
    char *copy = strndup(name.ptr ? name.ptr : "", name.len);
    if (!copy) goto oom;
    if (tid->type_id == 0) tid->type_id = next_type_id;
    if (tid->type_id >= next_type_id) next_type_id = tid->type_id + 1;
    types[ntypes++] = (TypeEntry){copy, tid->type_id, deleter};
  }
  pthread_mutex_unlock(&types_mu);
  return err;
oom:
  pthread_mutex_unlock(&types_mu);
  return hlf_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
}

void hlf_state_clear(HlfState *s) {
  if (!s->set) return;
  void (*d)(void *) = s->deleter ? s->deleter : type_deleter(s->type_id);
  if (d && s->state) d(s->state);
  *s = (HlfState){0};
}

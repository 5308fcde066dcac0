/* call.c: running a custom call: the checks every call site passes (a
 * handler is bound, the api_version can call it, a typed handler's API
 * version is known, its attributes decode), then the call itself: a legacy
 * function, or a typed FFI bundle's stages. For a typed FFI handler, the
 * first execution of a site runs its instantiate stage (no buffers,
 * attributes only); every execution then runs execute with the buffers, as
 * XLA:CPU does, or with hlf_set_all_stages prepare, initialize (when the
 * bundle has them) and execute, as XLA:GPU does. Prepare, initialize and
 * execute states live for one execution; the instantiate state lives with
 * the site. Each handler's API version is asked once (metadata query)
 * before its first call, and the handler gets the API table of its
 * generation.
 * Not here: which target a name means and the sites (registry.c), frames
 * (callframe.c), legacy calls (legacy.c), attribute syntax (attrs.c). */
#include "ffi/internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *hlf_api_version_name(int v) {
  switch (v) {
  case HLO_API_ORIGINAL: return "API_VERSION_ORIGINAL";
  case HLO_API_STATUS_RETURNING: return "API_VERSION_STATUS_RETURNING";
  case HLO_API_STATUS_RETURNING_UNIFIED: return "API_VERSION_STATUS_RETURNING_UNIFIED";
  case HLO_API_TYPED_FFI: return "API_VERSION_TYPED_FFI";
  default: return "API_VERSION_UNSPECIFIED";
  }
}

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
                             name, hlf_api_version_name(v), name);
    return -1;
  }
  if (t->source == HLF_SRC_BUILTIN && t->api_mask && !(t->api_mask & (1u << v))) {
    bool ffi_only = t->api_mask == 1u << HLO_API_TYPED_FFI;
    *err = hlf_strdup_printf("custom-call target \"%s\" (line %d, %s) is %s, but the instruction has "
                             "api_version=%s: XLA finds no implementation of it under that api_version",
                             name, (int)ins->line, t->origin,
                             ffi_only ? "a typed FFI handler (api_version=API_VERSION_TYPED_FFI)"
                                      : "a legacy custom-call function (not api_version=API_VERSION_TYPED_FFI)",
                             hlf_api_version_name(v));
    return -1;
  }
  *tp = t;
  if (!typed(t, ins)) return 0;
  if (hlf_target_query(t, err)) return -1;
  HlfSite *s = hlf_site_get(r, m, ins);
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
  bool all = hlf_all_stages(r);
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

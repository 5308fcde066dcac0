/* explain.c: the text of --explain-custom-calls. For each custom call of a
 * module, in text order: its name and line, target, api_version, operand
 * and result shapes, the attributes decoded from backend_config with their
 * types (what a typed FFI handler receives, including the opted-in
 * "hlorun.instruction" dictionary), and how the target is bound. Decoding
 * errors are shown in the text and also recorded, positioned, in the
 * diagnostics; fusions with kind=kCustom are listed too (their body runs).
 * No handler runs; typed handlers only answer the metadata
 * query (their API version and traits), except that handlers reading a
 * JSON backend_config (HLORUN_FFI_TRAIT_JSON_CONFIG) are instantiated, which
 * checks their config, to say whether the call can run.
 * Not here: the checks themselves (call.c). */
#include "ffi/internal.h"
#include "ir/print.h"
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *source_name(const HlfTarget *t) {
  switch (t->source) {
  case HLF_SRC_BUILTIN: return "built-in typed FFI handler";
  case HLF_SRC_PLUGIN: return "typed FFI handler registered by a plugin";
  default: return "symbol";
  }
}

static void binding(HlcText *out, HlfRegistry *r, const HloInstr *ins) {
  const char *name = ins->custom_call_target ? ins->custom_call_target : "";
  HlfTarget *t = hlf_find_target(r, name);
  if (!t) {
    hlc_text_printf(out, "  binding: NOT BOUND (bind with --custom-call %s=LIB.so[:SYMBOL], or "
                    "--plugin LIB.so[:FUNCTION] for a plugin that registers it)\n", name);
    return;
  }
  bool typed_ffi = t->source != HLF_SRC_SYMBOL || ins->api_version == HLO_API_TYPED_FFI;
  char *qerr = NULL;
  if (typed_ffi && hlf_target_query(t, &qerr)) {
    hlc_text_printf(out, "  binding: %s, %s: error: %s\n", t->origin, source_name(t), qerr);
    free(qerr);
    return;
  }
  hlc_text_printf(out, "  binding: %s, %s", t->origin, source_name(t));
  if (t->source == HLF_SRC_SYMBOL)
    hlc_text_printf(out, ", called as %s",
                    ins->api_version == HLO_API_TYPED_FFI ? "a typed FFI handler"
                    : ins->api_version == HLO_API_ORIGINAL ? "void f(void *out, const void **in)"
                    : ins->api_version == HLO_API_STATUS_RETURNING
                        ? "void f(void *out, const void **in, XlaCustomCallStatus *status)"
                        : "void f(void *out, const void **in, const char *opaque, size_t "
                          "opaque_len, XlaCustomCallStatus *status)");
  else if (t->source == HLF_SRC_PLUGIN) {
    const char *st[4] = {t->bundle.instantiate ? " instantiate" : "",
                         t->bundle.prepare ? " prepare" : "",
                         t->bundle.initialize ? " initialize" : "", " execute"};
    hlc_text_printf(out, ", stages:%s%s%s%s", st[0], st[1], st[2], st[3]);
    if (ins->api_version != HLO_API_TYPED_FFI)
      hlc_text_printf(out, " (but api_version is not API_VERSION_TYPED_FFI: error)");
  }
  if (t->queried && !t->query_error) hlc_text_printf(out, ", XLA FFI API %d.%d", t->major, t->minor);
  hlc_text_put(out, "\n", 1);
}

static void one(HlcText *out, HlfRegistry *r, const HloModule *m, const HloInstr *ins,
                HlcDiags *d) {
  hlc_text_printf(out, "custom-call %%%s (line %d)\n", ins->name ? ins->name : "?", (int)ins->line);
  hlc_text_printf(out, "  target: \"%s\"\n", ins->custom_call_target ? ins->custom_call_target : "");
  hlc_text_printf(out, "  api_version: %s (%d)\n", hlf_api_version_name(ins->api_version),
                  (int)ins->api_version);
  hlc_text_printf(out, "  operands:");
  if (!ins->nops) hlc_text_printf(out, " none");
  for (int32_t i = 0; i < ins->nops; i++) {
    hlc_text_printf(out, "%s ", i ? "," : "");
    hlp_print_shape(out, &ins->ops[i]->shape, true);
  }
  hlc_text_printf(out, "\n  result: ");
  hlp_print_shape(out, &ins->shape, true);
  hlc_text_put(out, "\n", 1);

  const char *tn = ins->custom_call_target ? ins->custom_call_target : "";
  HlfTarget *t = hlf_find_target(r, tn);
  /* The convention: a bound symbol follows api_version; built-ins and
   * plugin handlers are typed FFI. */
  bool typed_ffi = t ? t->source != HLF_SRC_SYMBOL || ins->api_version == HLO_API_TYPED_FFI
                     : ins->api_version == HLO_API_TYPED_FFI;
  char *qe = NULL;
  bool json = typed_ffi && t && hlf_target_query(t, &qe) == 0 &&
              (t->traits & HLORUN_FFI_TRAIT_JSON_CONFIG);
  free(qe);
  if (!typed_ffi) {
    hlc_text_printf(out, "  opaque: %zu bytes (backend_config, passed verbatim; no attributes)\n",
                    ins->backend_config ? ins->backend_config_len : (size_t)0);
  } else if (json) {
    hlc_text_printf(out, "  backend_config: %zu bytes of JSON, decoded by the handler\n",
                    ins->backend_config ? ins->backend_config_len : (size_t)0);
  } else {
    HlcArena a;
    hlc_arena_init(&a);
    HlfAttr root;
    size_t eo;
    char *err = NULL;
    if (hlf_attrs_parse(&a, ins->backend_config, ins->backend_config_len, &root, &eo, &err)) {
      size_t off = hlf_config_source_offset(m, ins, eo);
      int line = 0, col = 0;
      if (m->source) hlc_line_col(m->source, m->source_len, off, &line, &col);
      hlc_text_printf(out, "  attributes: error at %d:%d: %s\n", line, col, err ? err : "");
      hlc_diag_at(d, HLC_ERROR, m->filename, m->source, m->source_len, off, "%s", err ? err : "");
      free(err);
    } else {
      HlfAttr mem;
      char *qe = NULL;
      bool trait = t && hlf_target_query(t, &qe) == 0 &&
                   (t->traits & HLORUN_FFI_TRAIT_INSTRUCTION_MEMBERS);
      free(qe);
      if ((trait || hlf_members_wanted(r, tn)) &&
          hlf_members_attr(&a, ins, &mem) == 0)
        hlf_attrs_insert(&a, &root, &mem);
      hlc_text_printf(out, "  attributes: ");
      if (root.count == 0) hlc_text_printf(out, "none");
      else hlf_text_attr_value(out, &root, 2);
      hlc_text_put(out, "\n", 1);
    }
    hlc_arena_free(&a);
  }
  binding(out, r, ins);
  if (json) {
    /* The handler checks its config against the shapes when instantiated:
     * say before running whether this call can run. */
    char *err = NULL;
    if (hlf_check(r, m, ins, &err) == 0) hlc_text_printf(out, "  runs: yes\n");
    else hlc_text_printf(out, "  runs: NO: %s\n", err ? err : "out of memory");
    free(err);
  }
}

/* A fusion with kind=kCustom (XLA:GPU's Triton, custom and cuDNN fusions):
 * what its fusion_backend_config names, and that its HLO body is what runs
 * (the tiling does not change the values). */
static void custom_fusion(HlcText *out, const HloInstr *ins) {
  hlc_text_printf(out, "fusion %%%s (line %d), kind=kCustom", ins->name ? ins->name : "?",
                  (int)ins->line);
  json_t *root = ins->backend_config
                     ? json_loadb(ins->backend_config, ins->backend_config_len, 0, NULL) : NULL;
  json_t *fbc = json_object_get(root, "fusion_backend_config");
  const char *kind = json_string_value(json_object_get(fbc, "kind"));
  if (kind) hlc_text_printf(out, ", backend kind \"%s\"", kind);
  const HloComputation *body = NULL;
  for (int32_t k = 0; k < ins->ncalled && !body; k++) body = ins->called[k].comp;
  hlc_text_printf(out, "\n  runs: yes, evaluated from its fused computation %%%s%s\n",
                  body && body->name ? body->name : "?",
                  fbc && json_object_size(fbc) > 1 ? " (its tiling configuration is recorded, "
                                                     "not needed for the values)" : "");
  json_decref(root);
}

char *hlf_explain(HlfRegistry *r, const HloModule *m, HlcDiags *d) {
  HlcText out = {0};
  int n = 0;
  for (int32_t c = 0; c < m->ncomps; c++)
    for (int32_t i = 0; i < m->comps[c]->ninstrs; i++) {
      const HloInstr *ins = m->comps[c]->instrs[i];
      bool fusion = ins->op == HLO_OP_FUSION && ins->fusion_kind == HLO_FUSION_CUSTOM;
      if (ins->op != HLO_OP_CUSTOM_CALL && !fusion) continue;
      if (n++) hlc_text_put(&out, "\n", 1);
      if (fusion) custom_fusion(&out, ins);
      else one(&out, r, m, ins, d);
    }
  if (!n) hlc_text_printf(&out, "no custom calls in module %s\n", m->name ? m->name : "");
  return hlc_text_take(&out);
}

/* print.c: canonical HLO text of a module (hlp_print) and the text helpers
 * the parser uses to normalise layout tails.
 *
 * Output: "HloModule NAME, attrs", the stack-frame index if any, then every
 * computation (callees first) with its signature (shapes without layouts),
 * instructions "[ROOT ]%name = SHAPE opcode(%a, %b), attr=value, ...".
 * Attributes are printed from their item trees, in XLA's order of kinds
 * (source order within a kind) with fixed spacing, so printing is idempotent: print(parse(print(parse(x)))) ==
 * print(parse(x)). Does not reproduce comments or the original spacing.
 */
#include "ir/print.h"
#include "common/numeric.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* C-escaped string body (printable ASCII kept, the rest as escapes). */
void hlp_put_escaped(HlcText *b, const char *s, size_t n, char quote) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '\n': hlc_text_puts(b, "\\n"); break;
    case '\t': hlc_text_puts(b, "\\t"); break;
    case '\r': hlc_text_puts(b, "\\r"); break;
    case '\\': hlc_text_puts(b, "\\\\"); break;
    default:
      if (c == (unsigned char)quote) {
        char e[2] = {'\\', (char)c};
        hlc_text_put(b, e, 2);
      } else if (c < 0x20 || c == 0x7f) {
        /* Octal keeps the escape short and unambiguous before digits. */
        hlc_text_printf(b, "\\%03o", c);
      } else {
        hlc_text_put(b, (const char *)&c, 1);
      }
    }
  }
}

/* Layout mode: 0 none, 1 always (as stored), 2 only if written. */
static void print_shape(HlcText *b, const HloShape *s, int layouts) {
  if (s->is_buffer) hlc_text_puts(b, "b(");
  if (s->dtype == HLO_TUPLE) {
    hlc_text_puts(b, "(");
    for (int32_t i = 0; i < s->ntuple; i++) {
      if (i) hlc_text_puts(b, ", ");
      print_shape(b, &s->tuple[i], layouts);
    }
    hlc_text_puts(b, ")");
  } else {
    hlc_text_puts(b, hlc_dtype_name(s->dtype));
    hlc_text_puts(b, "[");
    for (int32_t i = 0; i < s->rank; i++) {
      if (i) hlc_text_puts(b, ",");
      int dyn = s->dynamic ? s->dynamic[i] : HLO_DIM_STATIC;
      if (dyn == HLO_DIM_UNBOUNDED) hlc_text_puts(b, "?");
      else hlc_text_printf(b, "%s%lld", dyn == HLO_DIM_BOUNDED ? "<=" : "", (long long)s->dims[i]);
    }
    hlc_text_puts(b, "]");
    bool show = s->minor_to_major && (layouts == 1 || (layouts == 2 && s->layout_written));
    if (show && (s->rank > 0 || s->layout_tail)) {
      hlc_text_puts(b, "{");
      for (int32_t i = 0; i < s->rank; i++)
        hlc_text_printf(b, "%s%lld", i ? "," : "", (long long)s->minor_to_major[i]);
      if (s->layout_tail) {
        hlc_text_puts(b, ":");
        hlc_text_puts(b, s->layout_tail);
      }
      hlc_text_puts(b, "}");
    }
  }
  if (s->is_buffer) hlc_text_puts(b, ")");
}

void hlp_print_shape(HlcText *b, const HloShape *s, bool layouts) { print_shape(b, s, layouts ? 1 : 0); }

static void print_val(HlcText *b, const HloVal *v, int depth, bool tight);

/* Canonical separators: items are joined as written (nothing, a blank or a
 * comma); a comma gets a blank after it unless a number or a {...} group
 * follows, as XLA writes dimensions={1,0} and replica_groups={{0,1},{2,3}}
 * but slice={[0:2], [1:3]} and branch_computations={%a, %b}. */
static void print_items(HlcText *b, HloVal *const *v, int32_t n, int depth, bool tight_all) {
  /* A leading comma is kept: it is what makes "]{,1}" a group rather than
   * a layout when read back. */
  if (n && v[0]->sep == 2) hlc_text_puts(b, ",");
  for (int32_t i = 0; i < n; i++) {
    bool eq = v[i]->kind == HLO_VAL_TOKEN && v[i]->len == 1 && v[i]->text[0] == '=';
    char last = b->n ? b->p[b->n - 1] : 0;
    bool word = (last >= 'a' && last <= 'z') || (last >= 'A' && last <= 'Z') ||
                (last >= '0' && last <= '9') || last == '_' || last == '.' || last == '-';
    if (i && eq && v[i]->sep != 2 && word) {
      /* A word then a separate '=': written "w=" it would read back as an
       * attribute name, "w =" as an instruction definition. */
      hlc_text_puts(b, "/**/");
    } else if (i && v[i]->sep == 2) {
      bool tight = tight_all || v[i]->kind == HLO_VAL_BRACE ||
                   (v[i]->kind == HLO_VAL_TOKEN && !v[i]->word);
      hlc_text_puts(b, tight ? "," : ", ");
    } else if (i && v[i]->sep == 1) {
      hlc_text_puts(b, " ");
    }
    print_val(b, v[i], depth, tight_all);
  }
}

static void print_val(HlcText *b, const HloVal *v, int depth, bool tight) {
  if (depth > HLO_MAX_NESTING + 8) return;
  switch (v->kind) {
  case HLO_VAL_TOKEN: case HLO_VAL_RAW: hlc_text_put(b, v->text, v->len); break;
  case HLO_VAL_STRING: {
    char q = v->tok == '\'' ? '\'' : '"';
    hlc_text_put(b, &q, 1);
    hlp_put_escaped(b, v->text, v->len, q);
    hlc_text_put(b, &q, 1);
    break;
  }
  case HLO_VAL_BRACE: case HLO_VAL_BRACKET: case HLO_VAL_PAREN: {
    const char *open = v->kind == HLO_VAL_BRACE ? "{" : v->kind == HLO_VAL_BRACKET ? "[" : "(";
    const char *close = v->kind == HLO_VAL_BRACE ? "}" : v->kind == HLO_VAL_BRACKET ? "]" : ")";
    hlc_text_puts(b, open);
    print_items(b, v->items, v->nitems, depth + 1, tight);
    hlc_text_puts(b, close);
    break;
  }
  case HLO_VAL_ATTR:
    hlc_text_put(b, v->text, v->len);
    hlc_text_puts(b, "=");
    print_val(b, v->items[0], depth + 1, tight);
    break;
  case HLO_VAL_SHAPE: print_shape(b, v->shape, 2); break;
  case HLO_VAL_COMP:
    /* An inline body is lowered only where a known attribute takes a
     * computation; elsewhere (an unknown attribute, ignored) it prints as
     * an empty group, which parses back (printing nothing did not). */
    if (v->comp) { hlc_text_puts(b, "%"); hlc_text_puts(b, v->comp->name); }
    else hlc_text_puts(b, "{}");
    break;
  }
}

void hlp_print_val(HlcText *b, const HloVal *v) { print_val(b, v, 0, false); }

void hlp_print_vals(HlcText *b, HloVal *const *v, int32_t n, bool top) {
  (void)top;
  print_items(b, v, n, 0, false);
}

/* ---- Literals ----------------------------------------------------------------- */

static void print_elem(HlcText *b, HloDtype t, const unsigned char *p, bool array) {
  if (t == HLO_PRED && array) { hlc_text_puts(b, *p ? "1" : "0"); return; }
  char tmp[96];
  hlc_format_element(t, p, tmp, sizeof tmp);
  hlc_text_puts(b, tmp);
}

static void print_array(HlcText *b, const HloShape *s, const unsigned char *data, size_t es,
                        int32_t level, int64_t *next) {
  if (level == s->rank) {
    print_elem(b, s->dtype, data + (size_t)(*next)++ * es, s->rank > 0);
    return;
  }
  bool inner = level == s->rank - 1;
  hlc_text_puts(b, inner ? "{" : "{ ");
  for (int64_t i = 0; i < s->dims[level]; i++) {
    if (i) hlc_text_puts(b, ", ");
    print_array(b, s, data, es, level + 1, next);
  }
  hlc_text_puts(b, inner ? "}" : " }");
}

void hlp_print_literal(HlcText *b, const HloLiteral *l) {
  const HloShape *s = l->shape;
  if (s->dtype == HLO_TUPLE) {
    hlc_text_puts(b, "(");
    for (int32_t i = 0; i < l->ntuple; i++) {
      if (i) hlc_text_puts(b, ", ");
      hlp_print_literal(b, &l->tuple[i]);
    }
    hlc_text_puts(b, ")");
    return;
  }
  if (l->elided || !l->data) { hlc_text_puts(b, "{...}"); return; }
  int64_t next = 0;
  print_array(b, s, l->data, hlc_dtype_size(s->dtype), 0, &next);
}

/* ---- Module -------------------------------------------------------------------- */

/* Printing rank of an instruction attribute (XLA's order, spec 5.1):
 * opcode-specific ones (and unknown ones) first in source order, then called
 * computations, sharding, frontend_attributes, control-predecessors,
 * statistics, result_accuracy, origin, metadata, backend_config. */
static int attr_rank(const char *name) {
  static const char *const later[][10] = {
    {"to_apply", "calls", "condition", "body", "true_computation", "false_computation",
     "branch_computations", "select", "scatter", "called_computations"},
    {"sharding"}, {"frontend_attributes"}, {"control-predecessors"}, {"statistics"},
    {"result_accuracy"}, {"origin"}, {"metadata"}, {"backend_config"}};
  for (int r = 0; r < 9; r++)
    for (int k = 0; k < 10 && later[r][k]; k++)
      if (strcmp(name, later[r][k]) == 0) return r + 1;
  return 0;
}

static void print_attr(HlcText *b, const HloAttr *a, const HloInstr *ins) {
  hlc_text_puts(b, ", ");
  hlc_text_puts(b, a->name);
  hlc_text_puts(b, "=");
  if (ins && ins->sharding && strcmp(a->name, "sharding") == 0) {
    hlp_print_sharding(b, ins->sharding);
    return;
  }
  /* The mesh form of replica_groups (and its device_ids part, which reads
   * as an attribute of its own) joins with bare commas, as XLA prints it:
   * mesh['a'=2,'b'=2] {'a','b'} (MeshAxesReplicaGroupList::ToString). */
  const HloVal *v0 = a->nvalues ? a->values[0] : NULL;
  bool mesh = strcmp(a->name, "device_ids") == 0 ||
              (strcmp(a->name, "replica_groups") == 0 && v0 && v0->kind == HLO_VAL_TOKEN &&
               ((v0->len == 4 && strncmp(v0->text, "mesh", 4) == 0) ||
                (v0->len == 12 && strncmp(v0->text, "maximal_mesh", 12) == 0)));
  print_items(b, a->values, a->nvalues, 0, mesh);
}

/* calls: a computation to print as calls= among the called computations
 * (async sugar lowered to the explicit form), or NULL. */
/* Is a left out under drop (HLP_DROP_*)? backend_config stays on custom
 * calls: their handlers read it. */
static bool dropped(const HloAttr *a, const HloInstr *ins, unsigned drop) {
  if (!ins || !drop) return false;
  if ((drop & HLP_DROP_METADATA) && strcmp(a->name, "metadata") == 0) return true;
  if ((drop & HLP_DROP_CONTROL) && strcmp(a->name, "control-predecessors") == 0) return true;
  if ((drop & HLP_DROP_FRONTEND) && strcmp(a->name, "frontend_attributes") == 0) return true;
  return (drop & HLP_DROP_BACKEND) && ins->op != HLO_OP_CUSTOM_CALL &&
         strcmp(a->name, "backend_config") == 0;
}

static void print_attrs(HlcText *b, const HloAttr *a, int32_t n, bool ordered,
                        const HloComputation *calls, const HloInstr *ins, unsigned drop) {
  for (int r = 0; r <= (ordered ? 9 : 0); r++) {
    for (int32_t i = 0; i < n; i++)
      if ((!ordered || attr_rank(a[i].name) == r) && !dropped(&a[i], ins, drop))
        print_attr(b, &a[i], ins);
    if (r == 1 && calls) {
      hlc_text_puts(b, ", calls=%");
      hlc_text_puts(b, calls->name);
    }
  }
}

/* ins as written, or (name non-NULL) under another name, ROOT or not, its
 * operands named by opnames, without control-predecessors. */
static void print_instr_as(HlcText *b, const HloInstr *ins, unsigned drop, const char *name,
                           bool root, const char *const *opnames) {
  hlc_text_puts(b, (name ? root : ins->is_root) ? "  ROOT %" : "  %");
  hlc_text_puts(b, name ? name : ins->name);
  hlc_text_puts(b, " = ");
  print_shape(b, &ins->shape, 1);
  hlc_text_puts(b, " ");
  hlc_text_puts(b, hlp_opcode_name(ins->op));
  hlc_text_puts(b, "(");
  if (ins->op == HLO_OP_PARAMETER) {
    hlc_text_printf(b, "%lld", (long long)ins->parameter_number);
  } else if (ins->op == HLO_OP_CONSTANT) {
    if (ins->literal) hlp_print_literal(b, ins->literal);
  } else {
    for (int32_t i = 0; i < ins->nops; i++) {
      hlc_text_puts(b, i ? ", %" : "%");
      hlc_text_puts(b, name ? opnames[i] : ins->ops[i]->name);
    }
  }
  hlc_text_puts(b, ")");
  /* Async sugar lowered to an explicit async op: print its computation. */
  const HloComputation *calls = NULL;
  if (ins->op == HLO_OP_ASYNC_START || ins->op == HLO_OP_ASYNC_UPDATE ||
      ins->op == HLO_OP_ASYNC_DONE) {
    bool has_calls = false;
    for (int32_t i = 0; i < ins->nattrs; i++) has_calls |= strcmp(ins->attrs[i].name, "calls") == 0;
    if (!has_calls && ins->ncalled) calls = ins->called[0].comp;
  }
  print_attrs(b, ins->attrs, ins->nattrs, true, calls, ins,
              drop | (name ? HLP_DROP_CONTROL : 0));
  hlc_text_puts(b, "\n");
}

void hlp_print_instr_as(HlcText *b, const HloInstr *ins, const char *name, bool root,
                        const char *const *opnames) {
  print_instr_as(b, ins, 0, name, root, opnames);
}

typedef struct Hook {
  HlpInstrHook fn;
  void *user;
} Hook;

static void print_comp(HlcText *b, const HloComputation *c, unsigned drop, const Hook *h) {
  hlc_text_puts(b, c->is_entry ? "ENTRY %" : "%");
  hlc_text_puts(b, c->name);
  hlc_text_puts(b, " (");
  for (int32_t i = 0; i < c->nparams; i++) {
    if (i) hlc_text_puts(b, ", ");
    hlc_text_puts(b, c->params[i]->name);
    hlc_text_puts(b, ": ");
    print_shape(b, &c->params[i]->shape, 0);
  }
  hlc_text_puts(b, ") -> ");
  print_shape(b, &c->root->shape, 0);
  hlc_text_puts(b, " {\n");
  for (int32_t i = 0; i < c->ninstrs; i++)
    if (!h->fn || !h->fn(b, c->instrs[i], h->user))
      print_instr_as(b, c->instrs[i], drop, NULL, false, NULL);
  hlc_text_puts(b, "}");
  if (c->execution_thread) {
    hlc_text_puts(b, ", execution_thread=\"");
    hlp_put_escaped(b, c->execution_thread, strlen(c->execution_thread), '"');
    hlc_text_puts(b, "\"");
  }
  hlc_text_puts(b, "\n\n");
}

char *hlp_print(const HloModule *m, size_t *len) {
  return hlp_print_hooked(m, len, 0, NULL, NULL, NULL);
}

char *hlp_print_dropping(const HloModule *m, size_t *len, unsigned drop) {
  return hlp_print_hooked(m, len, drop, NULL, NULL, NULL);
}

char *hlp_print_hooked(const HloModule *m, size_t *len, unsigned drop, HlpInstrHook fn,
                       void *user, const bool *skip) {
  Hook h = {fn, user};
  HlcText b = {0};
  hlc_text_puts(&b, "HloModule ");
  hlc_text_puts(&b, m->name);
  print_attrs(&b, m->attrs, m->nattrs, false, NULL, NULL, 0);
  hlc_text_puts(&b, "\n\n");
  if (m->stack_frames_text) {
    hlc_text_puts(&b, m->stack_frames_text);
    hlc_text_puts(&b, "\n");
  }
  for (int32_t i = 0; i < m->ncomps; i++)
    if (!skip || !skip[i]) print_comp(&b, m->comps[i], drop, &h);
  if (b.oom) { free(b.p); return NULL; }
  if (len) *len = b.n;
  return b.p;
}

/* walk.c: read-only walks over a module's computations and instructions
 * through the public API (hlorun.h), for tools that draw or index a module
 * (the command's --graph, the Python package).
 *
 * Not here: finding one instruction by name and an instruction's operands
 * (observe.c), running anything. */
#include "interp/api.h"
#include "interp/valio.h"
#include <string.h>

static const HloInstr *I(const HloInstruction *i) { return (const HloInstr *)i; }

static const HloComputation *comp_at(const HloModule *m, int c) {
  return m && c >= 0 && c < m->ncomps ? m->comps[c] : NULL;
}

int hlo_module_num_computations(const HloModule *m) { return m ? m->ncomps : 0; }

const char *hlo_module_computation_name(const HloModule *m, int c) {
  const HloComputation *k = comp_at(m, c);
  return k ? k->name : NULL;
}

unsigned hlo_module_computation_flags(const HloModule *m, int c) {
  const HloComputation *k = comp_at(m, c);
  if (!k) return 0;
  return (k->is_entry ? HLO_COMPUTATION_ENTRY : 0u) |
         (k->is_fusion_body ? HLO_COMPUTATION_FUSION : 0u);
}

int hlo_module_computation_size(const HloModule *m, int c) {
  const HloComputation *k = comp_at(m, c);
  return k ? k->ninstrs : 0;
}

const HloInstruction *hlo_module_instruction(const HloModule *m, int c, int k) {
  const HloComputation *comp = comp_at(m, c);
  return comp && k >= 0 && k < comp->ninstrs ? (const HloInstruction *)comp->instrs[k] : NULL;
}

int hlo_instruction_is_root(const HloInstruction *i) {
  return i && I(i)->parent && I(i)->parent->root == I(i);
}

int hlo_instruction_num_called(const HloInstruction *i) { return i ? I(i)->ncalled : 0; }

const char *hlo_instruction_called(const HloInstruction *i, int k) {
  return i && k >= 0 && k < I(i)->ncalled && I(i)->called[k].comp ? I(i)->called[k].comp->name
                                                                   : NULL;
}

size_t hlo_instruction_shape_text(const HloInstruction *i, char *buf, size_t cap) {
  HlcText b = {0};
  if (i) hlp_print_shape(&b, &I(i)->shape, false);
  size_t n = b.p && !b.oom ? b.n : 0;
  if (buf && cap) {
    size_t k = n < cap - 1 ? n : cap - 1;
    if (k) memcpy(buf, b.p, k);
    buf[k] = 0;
  }
  hlc_text_free(&b);
  return n;
}

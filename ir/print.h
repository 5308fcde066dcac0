/* print.h: canonical HLO text of the IR (print.c): the whole module, and the
 * pieces (shapes, attribute values, literals) front ends and the run path
 * print on their own, into the growable buffer of common/text.h. */
#ifndef HLORUN_IR_PRINT_H
#define HLORUN_IR_PRINT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/text.h"
#include "ir/ir.h"

/* Canonical HLO text of the module (malloc'd, NUL-terminated; *len set when
 * len != NULL). Printing the printed text again gives the same text. */
char *hlp_print(const HloModule *m, size_t *len);
/* The same with instruction attributes left out (the reducer's candidates
 * without what does not change their outcome): metadata,
 * frontend_attributes, backend_config of every op but custom-call. */
enum { HLP_DROP_METADATA = 1, HLP_DROP_FRONTEND = 2, HLP_DROP_BACKEND = 4,
       HLP_DROP_CONTROL = 8 /* control-predecessors */ };
char *hlp_print_dropping(const HloModule *m, size_t *len, unsigned drop);
/* The same, hook (when non-NULL) asked first for every instruction: true
 * when it printed the instruction's lines itself (the fusion inliner);
 * computations with skip[index] set (skip non-NULL) left out. */
typedef bool (*HlpInstrHook)(HlcText *b, const HloInstr *ins, void *user);
char *hlp_print_hooked(const HloModule *m, size_t *len, unsigned drop, HlpInstrHook hook,
                       void *user, const bool *skip);
/* One instruction's line under another name, ROOT or not, its operands
 * named by opnames (ins->nops of them), control-predecessors left out. */
void hlp_print_instr_as(HlcText *b, const HloInstr *ins, const char *name, bool root,
                        const char *const *opnames);

void hlp_print_shape(HlcText *b, const HloShape *s, bool layouts);
void hlp_print_val(HlcText *b, const HloVal *v);
/* A string body with C escapes (quote escaped); a literal as in constant(...). */
void hlp_put_escaped(HlcText *b, const char *s, size_t n, char quote);
void hlp_print_literal(HlcText *b, const HloLiteral *l);
void hlp_print_vals(HlcText *b, HloVal *const *v, int32_t n, bool top);
/* A sharding in XLA's form, braces included (ir/sharding.c). */
struct HloSharding;
void hlp_print_sharding(HlcText *b, const struct HloSharding *s);
#endif

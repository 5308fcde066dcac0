/* parser.h: HLO text -> typed IR (ir.h), and IR -> canonical HLO text.
 * The lexer (lexer.re, re2c) and grammar (hlo.y, lemon) are internal. */
#ifndef HLORUN_PARSER_PARSER_H
#define HLORUN_PARSER_PARSER_H
#include <stddef.h>
#include "common/diag.h"
#include "parser/ir.h"

/* Parse a whole module. text need not be NUL-terminated; it is copied.
 * filename is used in messages ("<stdin>" for -). On error returns NULL and
 * records positioned errors in diags; warnings (unknown attributes) are
 * recorded even on success. Never crashes or loops on any input. */
HloModule *hlp_parse(const char *text, size_t len, const char *filename, HlcDiags *diags);
void hlp_module_free(HloModule *m);

/* Canonical HLO text of the module (malloc'd, NUL-terminated; *len set when
 * len != NULL). Printing the printed text again gives the same text. */
char *hlp_print(const HloModule *m, size_t *len);

/* Shape checks beyond parsing: infer each instruction's result shape from
 * its operands and attributes and compare with the declared one, operand
 * counts, called computation signatures, dimension numbers in range.
 * 0 if the module is consistent, else -1 with positioned errors. */
int hlp_verify(const HloModule *m, HlcDiags *diags);
#endif

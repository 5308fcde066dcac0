/* parser.h: HLO text -> typed IR (ir/ir.h). Printing (ir/print.h) and
 * verifying (ir/ir.h) the IR live below, in ir/; included here for callers
 * that parse, print and verify. The lexer (lexer.re, re2c) and grammar (hlo.y, lemon) are internal. */
#ifndef HLORUN_PARSER_PARSER_H
#define HLORUN_PARSER_PARSER_H
#include <stddef.h>
#include "common/diag.h"
#include "ir/ir.h"
#include "ir/print.h"

/* Parse a whole module. text need not be NUL-terminated; it is copied.
 * filename is used in messages ("<stdin>" for -). On error returns NULL and
 * records positioned errors in diags; warnings (unknown attributes) are
 * recorded even on success. Never crashes or loops on any input. */
HloModule *hlp_parse(const char *text, size_t len, const char *filename, HlcDiags *diags);
#endif

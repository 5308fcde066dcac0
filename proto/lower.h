/* lower.h: proto messages to IR pieces (literal.c) and to HLO text (to_text.c). */
#ifndef HLORUN_PROTO_LOWER_H
#define HLORUN_PROTO_LOWER_H
#include "proto/proto.h"
#include "proto/hlo.pb-c.h"

/* 0, or -1 with err naming the message and field. Allocations in a. */
int hpb_shape(HlcArena *a, const Xla__ShapeProto *sp, HloShape *out, char *err, size_t errn);
int hpb_literal(HlcArena *a, const Xla__LiteralProto *lp, const HloShape *shape, HloLiteral *out,
                char *err, size_t errn);
/* The module as HLO text (malloc'd), or NULL with err set. */
char *hpb_text_of_module(const Xla__HloModuleProto *m, size_t *len, char *err, size_t errn);
#endif

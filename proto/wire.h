/* wire.h: checking wire bytes against a protobuf-c descriptor (wire.c). */
#ifndef HLORUN_PROTO_WIRE_H
#define HLORUN_PROTO_WIRE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <protobuf-c/protobuf-c.h>

/* 0 if every field the descriptor knows has its wire type and every nested
 * message is well formed; else -1 and `where` names the path, e.g.
 * "xla.HloSnapshot.hlo: xla.HloProto.hlo_module: ... truncated". */
int hpb_wire_check(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n, int depth,
                   char *where, size_t where_cap);
/* Advance *p over one field: its number, wire type and (length-delimited)
 * payload. -1 if the bytes end inside it or it is malformed. */
int hpb_wire_next(const uint8_t **p, const uint8_t *end, uint32_t *field, int *wt,
                  const uint8_t **sub, size_t *subn);
#endif

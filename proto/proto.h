/* proto.h: XLA's protocol-buffer dumps read into hlorun's IR.
 *
 * Reads HloModuleProto, HloProto and HloSnapshot (binary wire format) and
 * LiteralProto values. A module is lowered by writing it as HLO text in
 * XLA's syntax (to_text.c) and parsing that with the text parser, so the
 * verifier, printer, interpreter and FFI are the same for both front ends,
 * and a module read from a proto prints (--print) exactly as its text would.
 * Literals are decoded into dense row-major arrays in hlorun's memory form
 * (literal.c). Nothing here allocates from a size field it has not checked
 * against the bytes actually present.
 */
#ifndef HLORUN_PROTO_PROTO_H
#define HLORUN_PROTO_PROTO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/arena.h"
#include "common/diag.h"
#include "common/pager.h"
#include "ir/ir.h"

/* What a buffer holds, judged from its content. */
typedef enum HpbKind {
  HPB_NOT_PROTO,   /* not a well-formed binary proto of a kind read here */
  HPB_MODULE,      /* HloModuleProto */
  HPB_HLO_PROTO,   /* HloProto (hlo_module = 1) */
  HPB_SNAPSHOT,    /* HloSnapshot (hlo = 1, arguments = 2, result = 3) */
  HPB_UNOPT_SNAPSHOT, /* HloUnoptimizedSnapshot (hlo_module = 1, partitions = 2) */
  HPB_LITERAL,     /* LiteralProto (shape = 1 and element fields) */
  HPB_ITERATION,   /* RunHloModuleIterationLiterals (arguments = 2, result = 3) */
  HPB_RUN_LITERALS /* RunHloModuleLiterals (iterations = 1): the first is read */
} HpbKind;

/* Sniffing walks the wire format only (no allocation). HLO text (it starts
 * with "HloModule", a comment or white space) is never taken for a proto. */
HpbKind hpb_sniff(const void *data, size_t len);
const char *hpb_kind_name(HpbKind k);   /* "HloSnapshot", ... */

/* The module of a HloModuleProto, HloProto or HloSnapshot, parsed into the
 * IR. NULL on error, with a diagnostic naming the message and field (or a
 * positioned error in the generated text, which --print shows). */
HloModule *hpb_parse_module(const void *data, size_t len, const char *filename, HlcDiags *diags);
/* The module as HLO text (malloc'd, NUL-terminated), or NULL on error. */
char *hpb_module_text(const void *data, size_t len, const char *filename, HlcDiags *diags,
                      size_t *text_len);

/* Decoded literals: a snapshot's arguments and result, or one LiteralProto.
 * Each value is an HloLiteral whose data is dense, row-major, elements in
 * hlorun's memory form (common/numeric.h); everything is in arena. */
typedef struct HpbLeaf HpbLeaf;
typedef struct HpbValues {
  HlcArena arena;
  int32_t n;              /* arguments (or 1 for a LiteralProto) */
  HloLiteral **values;
  HloLiteral *result;     /* the snapshot's result, or NULL if it has none */
  HpbLeaf *deferred;      /* HPB_READ_DEFER: leaves still to decode (read.c) */
  unsigned flags;
  HlcPager *pager;        /* the bytes are a file's image read on demand, or NULL */
  const char *filename;
} HpbValues;

/* Where the HloModuleProto lies in data (an HloModuleProto, HloProto or
 * either snapshot): 0 and its offset and size, or -1 if data holds none. */
int hpb_module_range(const void *data, size_t len, size_t *off, size_t *n);

/* A snapshot's (or run_hlo_module literals file's) arguments and result,
 * or a LiteralProto as one value.
 * NULL on error (diagnostic naming the message and field). */
HpbValues *hpb_read_values(const void *data, size_t len, const char *filename, HlcDiags *diags);
/* The same with the arguments left out (n = 0): only the recorded result
 * (or a LiteralProto's value) is decoded, for --expect. */
HpbValues *hpb_read_result(const void *data, size_t len, const char *filename, HlcDiags *diags);
/* An HloUnoptimizedSnapshot's partitions: how many (0 when data holds no
 * such snapshot), and partition part's arguments (each device's shards,
 * in their own shapes) as values. */
int hpb_count_partitions(const void *data, size_t len);
HpbValues *hpb_read_partition(const void *data, size_t len, const char *filename, HlcDiags *diags,
                              int part);
void hpb_values_free(HpbValues *v);

/* The general reader behind the four above. part >= 0: that partition of an
 * HloUnoptimizedSnapshot; else a snapshot's (or literals file's) values, or
 * a LiteralProto. Flags: */
enum {
  HPB_READ_ARGS = 1,   /* decode the arguments too (else only the result) */
  /* Leave array leaves whose elements lie in place in data undecoded (their
   * data NULL, nbytes set, everything checked but varint counts): data must
   * stay valid until they are filled with hpb_values_fill. */
  HPB_READ_DEFER = 2,
};
/* pager: data is a file's image whose large payloads are read on demand
 * (common/pager.h): each piece of elements is read just before it is
 * decoded and given back after, so a large argument is held once, in its
 * buffer. NULL for plain memory. */
HpbValues *hpb_read(const void *data, size_t len, const char *filename, HlcDiags *diags, int part,
                    unsigned flags, HlcPager *pager);
/* A leaf's elements into dst (leaf->nbytes bytes, row-major, memory form):
 * decoded from data if deferred, else copied. 0, or -1 with a diagnostic
 * naming the message and field (e.g. varints that disagree with the shape). */
int hpb_values_fill(HpbValues *v, const HloLiteral *leaf, void *dst, HlcDiags *diags);

/* Protocol-buffer text format (.pbtxt): 0 and the same message in binary
 * wire format (malloc'd) if the text starts with a top-level field of one
 * of the messages read here; -1 otherwise, with positioned diagnostics if it
 * does start like one but does not parse. */
int hpb_text_to_binary(const void *data, size_t len, const char *filename, HlcDiags *diags,
                       char **bin, size_t *bin_len);
/* Non-NULL (the message's descriptor) when the text starts like one. */
const struct ProtobufCMessageDescriptor *hpb_text_message(const void *data, size_t len);

/* The module as a binary HloModuleProto, following XLA's ToProto
 * conventions (write.c): 0 and *out (malloc'd) of *len bytes, or -1 with
 * err naming the computation, instruction and attribute that cannot be
 * written. Module attributes that belong to XLA's HloModuleConfig (replica
 * and partition counts, SPMD propagation flags), which HloModuleProto has no
 * field for, are left out and named in note (empty if none). */
int hpb_write_module(const HloModule *m, uint8_t **out, size_t *len, char *err, size_t errn,
                     char *note, size_t noten);

/* A value as a binary xla.LiteralProto (elements in its layout's physical
 * order, as XLA writes them): 0 and *out (malloc'd), or -1 with err. */
int hpb_write_literal(const HloLiteral *lit, uint8_t **out, size_t *len, char *err, size_t errn);

/* Binary content (control bytes in the first 4 KiB): not HLO text. */
int hpb_looks_binary(const void *data, size_t len);
/* Why bytes that are not text are not a message read here: the first
 * truncated or malformed top-level field and its byte offset. */
void hpb_wire_explain(const void *data, size_t len, char *msg, size_t cap);

/* ---- Internal (proto/ sources) ----------------------------------------------- */

/* The first length-delimited field `field` of a message: 0 and its payload,
 * -1 if absent or the message is malformed. */
int hpb_wire_find(const uint8_t *p, size_t n, uint32_t field, const uint8_t **sub, size_t *subn);
/* 1 if the bytes are a sequence of well-formed fields (depth 1 only). */
int hpb_wire_valid(const uint8_t *p, size_t n);
#endif

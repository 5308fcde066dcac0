/* fuzz_proto.c: libFuzzer target for the protocol-buffer readers (proto/):
 * the binary wire format (HloModuleProto, HloProto, HloSnapshot,
 * HloUnoptimizedSnapshot, LiteralProto, run_hlo_module literals) and the
 * text format; snapshot values both decoded at once and deferred (decoded
 * from the wire bytes into buffers afterwards). The first
 * byte picks binary or text; the rest is the file. A module that reads is
 * also written back as HLO text by the printer. Not here: HLO text
 * (fuzz_parse.c). */
#include "proto/proto.h"
#include "parser/parser.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* Every array leaf of l decoded as hlorun's snapshot loader does: the
 * deferred ones from the wire bytes into a buffer of the checked size. */
static void fill_leaves(HpbValues *v, const HloLiteral *l, HlcDiags *d) {
  if (!l) return;
  if (l->shape->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < l->ntuple; i++) fill_leaves(v, &l->tuple[i], d);
    return;
  }
  if (!l->nbytes) return;
  void *dst = malloc(l->nbytes);
  if (dst) hpb_values_fill(v, l, dst, d);
  free(dst);
}

static void read_deferred(const char *buf, size_t n, int part, HlcDiags *d) {
  HpbValues *v = hpb_read(buf, n, "fuzz", d, part, HPB_READ_ARGS | HPB_READ_DEFER, NULL);
  if (!v) return;
  for (int32_t i = 0; i < v->n; i++) fill_leaves(v, v->values[i], d);
  fill_leaves(v, v->result, d);
  hpb_values_free(v);
}

static void read_binary(const char *buf, size_t n) {
  HlcDiags d = {0};
  HpbKind k = hpb_sniff(buf, n);
  if (k == HPB_MODULE || k == HPB_HLO_PROTO || k == HPB_SNAPSHOT || k == HPB_UNOPT_SNAPSHOT) {
    HloModule *m = hpb_parse_module(buf, n, "fuzz", &d);
    if (m) {
      char *text = hlp_print(m, NULL);
      free(text);
      hlp_module_free(m);
    }
  }
  if (k == HPB_SNAPSHOT || k == HPB_LITERAL || k == HPB_ITERATION || k == HPB_RUN_LITERALS)
  {
    hpb_values_free(hpb_read_values(buf, n, "fuzz", &d));
    read_deferred(buf, n, -1, &d);
  }
  int parts = hpb_count_partitions(buf, n);
  for (int p = 0; p < parts && p < 4; p++) {
    hpb_values_free(hpb_read_partition(buf, n, "fuzz", &d, p));
    read_deferred(buf, n, p, &d);
  }
  if (k == HPB_NOT_PROTO && hpb_looks_binary(buf, n)) {
    char why[256];
    hpb_wire_explain(buf, n, why, sizeof why);
  }
  hlc_diags_clear(&d);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  if (size < 1 || size > 1 << 16) return 0;
  /* An exact-size copy: readers must not look past len. */
  size_t n = size - 1;
  char *buf = malloc(n ? n : 1);
  if (n) memcpy(buf, data + 1, n);
  if (data[0] & 1) {
    HlcDiags d = {0};
    char *bin;
    size_t bn;
    if (hpb_text_to_binary(buf, n, "fuzz", &d, &bin, &bn) == 0) {
      read_binary(bin, bn);
      free(bin);
    }
    hlc_diags_clear(&d);
  } else {
    read_binary(buf, n);
  }
  free(buf);
  return 0;
}

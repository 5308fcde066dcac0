/* fuzz_proto.c: libFuzzer target for the protocol-buffer readers (proto/):
 * the binary wire format (HloModuleProto, HloProto, HloSnapshot,
 * HloUnoptimizedSnapshot, LiteralProto, run_hlo_module literals) and the
 * text format. The first
 * byte picks binary or text; the rest is the file. A module that reads is
 * also written back as HLO text by the printer. Not here: HLO text
 * (fuzz_parse.c). */
#include "proto/proto.h"
#include "parser/parser.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

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
    hpb_values_free(hpb_read_values(buf, n, "fuzz", &d));
  int parts = hpb_count_partitions(buf, n);
  for (int p = 0; p < parts && p < 4; p++) hpb_values_free(hpb_read_partition(buf, n, "fuzz", &d, p));
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

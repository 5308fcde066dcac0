/* fuzz_values.c: libFuzzer target for the value readers of the command
 * line: HLO literal text, .npy and .npz (interp/literal_io.c, interp/npy.c).
 * The first byte picks the reader and the wanted element type; the rest is
 * the file. A value that reads must also write back (literal text, .npy).
 * Not here: module text (fuzz_parse.c). */
#include "interp/valio.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const HloDtype kinds[] = {HLO_F32, HLO_S32, HLO_PRED, HLO_BF16, HLO_F64, HLO_S4,
                                 HLO_U8, HLO_C64, HLO_F8E4M3FN, HLO_S64, HLO_U2, HLO_F16};

static void roundtrip(HliValue *v) {
  HlcText b = {0};
  hli_literal_write(v, &b);
  hlc_text_free(&b);
  if (v->dtype != HLO_TUPLE) {
    HlcDiags d = {0};
    hli_npy_write(v, &b, &d);
    hlc_text_free(&b);
    hlc_diags_clear(&d);
  }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  if (size < 1 || size > 1 << 16) return 0;
  unsigned sel = data[0];
  HloDtype t = kinds[(sel >> 2) % (sizeof kinds / sizeof *kinds)];
  /* An exact-size copy: readers must not look past len. */
  size_t n = size - 1;
  char *buf = malloc(n ? n : 1);
  if (n) memcpy(buf, data + 1, n);
  HlcDiags d = {0};
  HliValue *v = NULL;
  int64_t dims[2] = {2, 3};
  HloShape want = {.dtype = t, .rank = 2, .dims = dims};
  switch (sel & 3) {
  case 0: {   /* literal text, shape from the text */
    HlcArena a;
    hlc_arena_init(&a);
    if (hli_literal_read(buf, n, NULL, &a, "fuzz", &d, &v) == 0) { roundtrip(v); hli_value_unref(NULL, v); }
    hlc_arena_free(&a);
    break;
  }
  case 1:     /* literal text of a known shape */
    if (hli_literal_read(buf, n, &want, NULL, "fuzz", &d, &v) == 0) { roundtrip(v); hli_value_unref(NULL, v); }
    break;
  case 2: {   /* .npy: the header's own shape, then a fixed one */
    HliNpyInfo info;
    if (hli_npy_info(buf, n, "fuzz", &d, &info) == 0 && info.rank <= 4) {
      HloShape s = {.dtype = t, .rank = info.rank, .dims = info.dims};
      if (hli_npy_read(buf, n, &s, "fuzz", &d, &v) == 0) { roundtrip(v); hli_value_unref(NULL, v); }
    }
    if (hli_npy_read(buf, n, &want, "fuzz", &d, &v) == 0) hli_value_unref(NULL, v);
    break;
  }
  default: {  /* .npz and its members */
    HliNpzMember *mem;
    int32_t nm;
    if (hli_npz_read(buf, n, "fuzz", &d, &mem, &nm) == 0) {
      for (int32_t i = 0; i < nm; i++) {
        HliNpyInfo info;
        hli_npy_info(mem[i].data, mem[i].len, "fuzz", &d, &info);
        if (hli_npy_read(mem[i].data, mem[i].len, &want, "fuzz", &d, &v) == 0) hli_value_unref(NULL, v);
      }
      hli_npz_find(mem, nm, "arr_0");
      hli_npz_members_free(mem, nm);
    }
    /* Listed lazily: stored members in place, deflated ones streamed. */
    if (hli_npz_open(buf, n, "fuzz", &d, &mem, &nm) == 0) {
      for (int32_t i = 0; i < nm; i++) {
        if (hli_npz_member_npy(&mem[i], &want, "fuzz", &d, &v) == 0) hli_value_unref(NULL, v);
        if (hli_npz_member_bytes(&mem[i], "fuzz", &d) == 0 && mem[i].len && !mem[i].data) abort();
      }
      hli_npz_members_free(mem, nm);
    }
    break;
  }
  }
  hlc_diags_clear(&d);
  free(buf);
  return 0;
}

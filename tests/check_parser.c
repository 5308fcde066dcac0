/* check_parser.c: unit tests of the HLO text parser (placeholder; filled in
 * below). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "parser/parser.h"

START_TEST(minimal) {
  const char *t = "HloModule m\nENTRY main {\n  ROOT p = f32[2] parameter(0)\n}\n";
  HlcDiags d = {0};
  HloModule *m = hlp_parse(t, strlen(t), "t.hlo", &d);
  ck_assert_ptr_nonnull(m);
  hlp_module_free(m);
  hlc_diags_clear(&d);
}
END_TEST

int main(void) {
  Suite *s = suite_create("parser");
  TCase *tc = tcase_create("basic");
  tcase_add_test(tc, minimal);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int nf = srunner_ntests_failed(r);
  srunner_free(r);
  return nf ? 1 : 0;
}

#include "tests/dotconv_util.h"
START_TEST(t_dummy) { ck_assert_int_eq(1, 1); }
END_TEST
int main(void) {
  Suite *s = suite_create("dot");
  TCase *tc = tcase_create("basic");
  tcase_add_test(tc, t_dummy);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf != 0;
}

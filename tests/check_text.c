/* check_text.c: the one growable buffer (common/text.h): appends of every
 * kind, long formatted text that does not fit the small stack buffer,
 * embedded NUL bytes, take and free, and a failed append being sticky. */
#include "testlib.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/text.h"

START_TEST(appends) {
  HlcText t = {0};
  hlc_text_puts(&t, "f32[");
  hlc_text_printf(&t, "%d,%s", 2, "3");
  hlc_text_putc(&t, ']');
  hlc_text_put(&t, "{1,0}xyz", 5);
  ck_assert_uint_eq(t.n, 13);
  ck_assert_str_eq(t.p, "f32[2,3]{1,0}");
  ck_assert(!t.oom);
  hlc_text_free(&t);
  ck_assert(t.p == NULL && t.n == 0 && t.cap == 0);
}
END_TEST

/* 10,000 formatted bytes in one call, then 100,000 single bytes: the
 * contents are exactly what was written, NUL-terminated. */
START_TEST(long_text) {
  HlcText t = {0};
  char *big = malloc(10001);
  memset(big, 'a', 10000);
  big[10000] = 0;
  hlc_text_printf(&t, "<%s>", big);
  ck_assert_uint_eq(t.n, 10002);
  ck_assert(t.p[0] == '<' && t.p[10001] == '>' && t.p[10002] == 0);
  ck_assert(memcmp(t.p + 1, big, 10000) == 0);
  for (int i = 0; i < 100000; i++) hlc_text_putc(&t, (char)('0' + i % 10));
  ck_assert_uint_eq(t.n, 110002);
  ck_assert(t.p[10002] == '0' && t.p[10011] == '9' && t.p[110001] == '9' && t.p[110002] == 0);
  free(big);
  hlc_text_free(&t);
}
END_TEST

/* Bytes, not only text: a NUL inside counts. */
START_TEST(bytes) {
  HlcText t = {0};
  hlc_text_put(&t, "a\0b", 3);
  ck_assert_uint_eq(t.n, 3);
  ck_assert(t.p[0] == 'a' && t.p[1] == 0 && t.p[2] == 'b');
  hlc_text_free(&t);
}
END_TEST

START_TEST(take) {
  HlcText t = {0};
  char *s = hlc_text_take(&t);   /* nothing written: "" */
  ck_assert_str_eq(s, "");
  free(s);
  hlc_text_puts(&t, "abc");
  s = hlc_text_take(&t);
  ck_assert_str_eq(s, "abc");
  ck_assert(t.p == NULL && t.n == 0);
  free(s);
}
END_TEST

/* After a failed append nothing more is written and take gives NULL. */
START_TEST(oom_sticky) {
  HlcText t = {0};
  hlc_text_puts(&t, "ab");
  hlc_text_put(&t, "x", SIZE_MAX - 1);   /* cannot fit: fails without reading */
  ck_assert(t.oom);
  hlc_text_puts(&t, "cd");
  ck_assert_uint_eq(t.n, 2);
  ck_assert(hlc_text_take(&t) == NULL);
  ck_assert(!t.oom && t.p == NULL);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("text");
  TCase *t = tcase_create("text");
  tcase_add_test(t, appends);
  tcase_add_test(t, long_text);
  tcase_add_test(t, bytes);
  tcase_add_test(t, take);
  tcase_add_test(t, oom_sticky);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tl_main(suite()); }

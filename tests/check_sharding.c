/* check_sharding.c: shardings as typed IR values (ir/sharding.h): the one
 * parser on XLA's text forms, the tile arithmetic, the printer, and the
 * parser filling HloInstr.sharding. Expected tile assignments are worked out
 * by hand from XLA's definitions (iota: arange reshaped, transposed,
 * flattened). */
#include "testlib.h"
#include <stdio.h>
#include "ir/print.h"
#include "ir/sdy.h"
#include "ir/sharding.h"
#include "parser/parser.h"

static HlcArena arena;
static char why[256];

static void setup(void) { hlc_arena_init(&arena); why[0] = 0; }
static void teardown(void) { hlc_arena_free(&arena); }

static HloSharding parsed(const char *text) {
  HloSharding s;
  ck_assert_msg(hlo_sharding_parse(&arena, text, &s, why, sizeof why) == 0, "%s: %s", text, why);
  return s;
}

/* The printer's text for s, compared with want. */
static void prints(const HloSharding *s, const char *want) {
  HlcText b = {0};
  hlp_print_sharding(&b, s);
  ck_assert_msg(b.p && b.n == strlen(want) && memcmp(b.p, want, b.n) == 0, "printed %.*s, want %s",
                b.p ? (int)b.n : 0, b.p ? b.p : "", want);
  free(b.p);
}

static void rejects(const char *text, const char *message) {
  HloSharding s;
  ck_assert_int_eq(hlo_sharding_parse(&arena, text, &s, why, sizeof why), -1);
  ck_assert_msg(strstr(why, message), "%s: got '%s', want '%s'", text, why, message);
}

START_TEST(iota_transposed) {
  /* <=[2,2]T(1,0): arange(4) as [[0,1],[2,3]], transposed [[0,2],[1,3]]:
   * devices 0,2,1,3; the last of the [2,1,2] dimensions replicates, so
   * partitions 0 and 2 hold row block 0, partitions 1 and 3 row block 1. */
  const char *text = "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}";
  HloSharding s = parsed(text);
  ck_assert_int_eq(s.kind, HLO_SHARDING_TILED);
  ck_assert_int_eq(s.ndims, 3);
  ck_assert_int_eq(s.nsub, 1);
  ck_assert_int_eq(s.subgroup[0], HLO_SHARDING_REPLICATED);
  int64_t want[] = {0, 2, 1, 3};
  for (int k = 0; k < 4; k++) ck_assert_int_eq(s.devices[k], want[k]);
  ck_assert_int_eq(hlo_sharding_tiles(&s, 0), 2);
  ck_assert_int_eq(hlo_sharding_tiles(&s, 1), 1);
  ck_assert_int_eq(hlo_sharding_tiles(&s, 2), 1);
  int64_t idx[2];
  ck_assert_int_eq(hlo_sharding_tile_of(&s, 2, 2, idx), 0);
  ck_assert_int_eq(idx[0], 0);
  ck_assert_int_eq(hlo_sharding_tile_of(&s, 1, 2, idx), 0);
  ck_assert_int_eq(idx[0], 1);
  ck_assert_int_eq(hlo_sharding_tile_of(&s, 3, 2, idx), 0);
  ck_assert_int_eq(idx[0], 1);
  ck_assert_int_eq(hlo_sharding_tile_of(&s, 4, 2, idx), -1);
  prints(&s, text);
  /* <=[3,2]T(1,0): [[0,1],[2,3],[4,5]] transposed is [[0,2,4],[1,3,5]]. */
  s = parsed("{devices=[2,3]<=[3,2]T(1,0)}");
  int64_t want6[] = {0, 2, 4, 1, 3, 5};
  for (int k = 0; k < 6; k++) ck_assert_int_eq(s.devices[k], want6[k]);
  /* Partition 4 sits at row 0, column 2. */
  ck_assert_int_eq(hlo_sharding_tile_of(&s, 4, 2, idx), 0);
  ck_assert_int_eq(idx[0], 0);
  ck_assert_int_eq(idx[1], 2);
  s = parsed("{devices=[4]<=[4]}");
  for (int k = 0; k < 4; k++) ck_assert_int_eq(s.devices[k], k);
  ck_assert_int_eq(s.niota, 1);
  ck_assert(!s.iota_transposed);
  prints(&s, "{devices=[4]<=[4]}");
}
END_TEST

START_TEST(explicit_list) {
  /* Devices 1,0 over [1,2]: partition 0 holds column block 1. The metadata
   * (a brace inside its string) is kept verbatim. */
  HloSharding s = parsed("{devices=[1,2]1,0 metadata={op_name=\"a}\"}}");
  ck_assert_int_eq(s.niota, 0);
  int64_t idx[2];
  ck_assert_int_eq(hlo_sharding_tile_of(&s, 0, 2, idx), 0);
  ck_assert_int_eq(idx[0], 0);
  ck_assert_int_eq(idx[1], 1);
  ck_assert_int_eq((int)s.metadata_len, 14);
  ck_assert(memcmp(s.metadata, "{op_name=\"a}\"}", 14) == 0);
  prints(&s, "{devices=[1,2]1,0 metadata={op_name=\"a}\"}}");
  /* Subgroups of two kinds: one data dimension of 2 tiles. */
  s = parsed("{devices=[2,2,1]0,1,2,3 last_tile_dims={manual, replicated}}");
  ck_assert_int_eq(s.nsub, 2);
  ck_assert_int_eq(s.subgroup[0], HLO_SHARDING_MANUAL);
  ck_assert_int_eq(s.subgroup[1], HLO_SHARDING_REPLICATED);
  ck_assert(!s.last_tile_dim_replicate);
  ck_assert_int_eq(hlo_sharding_tiles(&s, 0), 2);
  ck_assert_int_eq(hlo_sharding_tiles(&s, 1), 1);
  /* Partition 3 is at [1,1,0]: data tile 1. */
  ck_assert_int_eq(hlo_sharding_tile_of(&s, 3, 1, idx), 0);
  ck_assert_int_eq(idx[0], 1);
  prints(&s, "{devices=[2,2,1]0,1,2,3 last_tile_dims={manual, replicated}}");
}
END_TEST

START_TEST(kinds_and_tuples) {
  HloSharding s = parsed(" {{replicated}, {maximal device=1}, {manual}} ");
  ck_assert_int_eq(s.kind, HLO_SHARDING_TUPLE);
  ck_assert_int_eq(s.ntuple, 3);
  ck_assert_int_eq(s.tuple[1].kind, HLO_SHARDING_MAXIMAL);
  ck_assert_int_eq(s.tuple[1].device, 1);
  ck_assert_ptr_eq(hlo_sharding_leaf(&s, 2), &s.tuple[2]);
  ck_assert_ptr_null(hlo_sharding_leaf(&s, 3));
  ck_assert(hlo_sharding_is_replicated(hlo_sharding_leaf(&s, 0)));
  ck_assert(!hlo_sharding_is_replicated(hlo_sharding_leaf(&s, 2)));
  prints(&s, "{{replicated}, {maximal device=1}, {manual}}");
  s = parsed("{}");
  ck_assert_int_eq(s.kind, HLO_SHARDING_TUPLE);
  ck_assert_int_eq(s.ntuple, 0);
  s = parsed("{unknown shard_as 2}");
  ck_assert_int_eq(s.kind, HLO_SHARDING_UNKNOWN);
  ck_assert(hlo_sharding_is_replicated(&s));
  ck_assert_int_eq(s.group, HLO_SHARD_AS);
  ck_assert_int_eq(s.group_id, 2);
  ck_assert_ptr_eq(hlo_sharding_leaf(&s, 5), &s);
  prints(&s, "{unknown shard_as 2}");
  s = parsed("{unreduced}");
  ck_assert_int_eq(s.kind, HLO_SHARDING_UNREDUCED);
  /* Named-mesh forms are kept as written. */
  s = parsed("{mesh['a'=2,'b'=1], [{'a'}]}");
  ck_assert_int_eq(s.kind, HLO_SHARDING_MESH);
  prints(&s, "{mesh['a'=2,'b'=1], [{'a'}]}");
  /* A prefix: the bytes of the sharding, not what follows. */
  ck_assert_int_eq(hlo_sharding_parse_prefix(&arena, "{replicated}, x", &s, why, sizeof why), 12);
}
END_TEST

START_TEST(malformed) {
  rejects("{devices=[2]0,0}", "each device once");
  rejects("{devices=[2,2]<=[8]}", "an iota whose size is the tile count");
  rejects("{devices=[2,2]<=[2]}", "an iota whose size is the tile count");
  rejects("{devices=[2,2]<=[2,2]T(0,0)}", "a permutation");
  rejects("{devices=[2,2]0,1,2}", "one device per tile");
  rejects("{devices=[0]}", "tile counts from 1");
  rejects("{maximal}", "device=N");
  rejects("{replicated", "'}'");
  rejects("{replicated} x", "the end");
  rejects("{sideways}", "replicated, manual");
  rejects("{devices=[2]0,1 last_tile_dims={bogus}}", "replicated, manual, unreduced or unknown");
  rejects("{replicated last_tile_dim_replicate}", "only after devices=");
  rejects("{devices=[2]0,1 last_tile_dims={manual, manual}}", "fewer subgroup dimensions");
  rejects("{devices=[2]0,1 metadata={op_name=\"x\"}", "'}'");
  rejects("{devices=[99999999999999999999]0}", "a smaller number");
}
END_TEST

/* The HLO text parser fills HloInstr.sharding, the printer writes it back,
 * and a bad one is a parse error naming its line. */
START_TEST(module_shardings) {
  const char *text =
      "HloModule m, num_partitions=4\n\n"
      "ENTRY %e (p: f32[4,2]) -> (f32[4,2], f32[4,2]) {\n"
      "  %p = f32[4,2]{1,0} parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
      "  ROOT %t = (f32[4,2]{1,0}, f32[4,2]{1,0}) tuple(%p, %p), sharding={{replicated}, {maximal device=3}}\n"
      "}\n";
  HlcDiags d = {0};
  HloModule *m = hlp_parse(text, strlen(text), "t.hlo", &d);
  ck_assert_ptr_nonnull(m);
  const HloSharding *ps = m->entry->params[0]->sharding;
  ck_assert_ptr_nonnull(ps);
  ck_assert_int_eq(ps->kind, HLO_SHARDING_TILED);
  ck_assert_int_eq(hlo_sharding_tiles(ps, 0), 2);
  ck_assert_int_eq(ps->devices[3], 3);
  const HloSharding *rs = m->entry->root->sharding;
  ck_assert_int_eq(rs->kind, HLO_SHARDING_TUPLE);
  ck_assert_int_eq(rs->tuple[1].device, 3);
  size_t n;
  char *printed = hlp_print(m, &n);
  ck_assert_msg(strstr(printed, "parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"),
                "%s", printed);
  ck_assert_msg(strstr(printed, "tuple(%p, %p), sharding={{replicated}, {maximal device=3}}\n"), "%s", printed);
  free(printed);
  hlp_module_free(m);
  hlc_diags_clear(&d);

  const char *bad =
      "HloModule m\n\n"
      "ENTRY %e (p: f32[4]) -> f32[4] {\n"
      "  ROOT %p = f32[4]{0} parameter(0), sharding={devices=[2]0,0}\n"
      "}\n";
  m = hlp_parse(bad, strlen(bad), "bad.hlo", &d);
  ck_assert_ptr_null(m);
  ck_assert_int_ge(d.n, 1);
  char all[2048] = "";
  for (int i = 0; i < d.n; i++) {
    size_t used = strlen(all);
    snprintf(all + used, sizeof all - used, "%s", d.v[i].text);
  }
  ck_assert_msg(strstr(all, "bad.hlo:4:") && strstr(all, "each device once"), "%s", all);
  hlc_diags_clear(&d);
}
END_TEST

/* The Shardy round trip's strings (ir/sdy.h), as HLO dumps made with
 * Shardy carry them in frontend attributes. A 2 x 4 mesh "a" x "b"
 * (device 4a + b): each sharding worked out by hand as in
 * check_stablehlo's shardy_shardings. */
START_TEST(sdy_round_trip_strings) {
  HlpMesh m[4];
  int n;
  ck_assert_int_eq(hlp_sdy_parse_meshes("{mesh = #sdy.mesh<[\"a\"=2, \"b\"=4]>, one = #sdy.mesh<[\"<axis 0x1>\"=8]>, "
                                        "maximal_mesh = #sdy.mesh<[], device_ids=[0]>}", m, 4, &n, why, sizeof why), 0);
  ck_assert_int_eq(n, 3);
  ck_assert_int_eq(m[0].naxes, 2);
  ck_assert_int_eq(m[0].size[1], 4);
  ck_assert_int_eq((int)m[1].alen[0], 10);   /* <axis 0x1> */
  ck_assert_int_eq(m[2].naxes, 0);
  const HlpMesh *mo[4];
  HlpSdySharding sh[4];
  ck_assert_int_eq(hlp_sdy_parse_shardings("#sdy.sharding_per_value<[<@mesh, [{\"b\", ?}, {\"a\"}p1]>, "
                                           "<@mesh, [{}, {?}], replicated={\"a\"}>, <@one, [{\"<axis 0x1>\"}]>]>",
                                           m, n, mo, sh, 4, &n, why, sizeof why), 0);
  ck_assert_int_eq(n, 3);
  ck_assert_ptr_eq(mo[2], &m[1]);
  const char *want[3] = {"{devices=[4,2]<=[2,4]T(1,0)}", "{replicated}", "{devices=[8]<=[8]}"};
  for (int k = 0; k < 3; k++) {
    HlcText t = {0};
    hlp_sdy_to_hlo(&t, mo[k], &sh[k], NULL, NULL, NULL);
    ck_assert_msg(t.p && strcmp(t.p, want[k]) == 0, "sharding %d: %s, want %s", k, t.p ? t.p : "", want[k]);
    free(t.p);
  }
  /* Only the manual axis "a" counts: "b" replicates. */
  bool manual[HLP_SDY_MAX_AXES];
  ck_assert_int_eq(hlp_sdy_parse_manual_axes("#sdy<manual_axes{\"a\"}>", &m[0], manual, why, sizeof why), 0);
  ck_assert(manual[0] && !manual[1]);
  HlcText t = {0};
  int64_t tiles[2];
  hlp_sdy_to_hlo(&t, mo[0], &sh[0], manual, NULL, tiles);
  ck_assert_str_eq(t.p, "{devices=[1,2,4]<=[8] last_tile_dim_replicate}");
  ck_assert_int_eq(tiles[0], 1);
  ck_assert_int_eq(tiles[1], 2);
  free(t.p);
  /* Refused, with what and where. */
  ck_assert_int_eq(hlp_sdy_parse_shardings("#sdy.sharding<@mesh, [{\"a\":(1)2}, {}]>", m, 3, mo, sh, 4, &n, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "sub-axes"));
  ck_assert_int_eq(hlp_sdy_parse_shardings("#sdy.sharding<@nomesh, [{}]>", m, 3, mo, sh, 4, &n, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "no mesh @nomesh"));
  ck_assert_int_eq(hlp_sdy_parse_shardings("#sdy.sharding<@mesh, [{\"a\"}, {\"a\"}]>", m, 3, mo, sh, 4, &n, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "used twice"));
  ck_assert_int_eq(hlp_sdy_parse_meshes("{m = #sdy.mesh<[\"a\"=2], device_ids=[1, 0]>}", m, 4, &n, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "device_ids"));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sharding");
  TCase *t = tcase_create("sharding");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, iota_transposed);
  tcase_add_test(t, explicit_list);
  tcase_add_test(t, kinds_and_tuples);
  tcase_add_test(t, malformed);
  tcase_add_test(t, module_shardings);
  tcase_add_test(t, sdy_round_trip_strings);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tl_main(suite()); }

/* check_devices.c: the pieces of multi-device runs, each against values
 * worked out by hand from XLA's rules (research/spmd.md, the comments):
 * participant groups of the four group modes (ir/collective.c),
 * shardings and their tiles (devices/sharding.c), splitting global inputs
 * and assembling results, and hlo_execute_devices through the public API
 * with the same bits on 1 and 3 kernel threads. The end-to-end runs and
 * MPI are tests/devices/run.sh. */
#include "testlib.h"
#include <stdio.h>
#include "ir/collective.h"
#include "parser/parser.h"

static HloModule *parse(const char *text) {
  HlcDiags d = {0};
  HloModule *m = hlp_parse(text, strlen(text), "t.hlo", &d);
  if (!m && d.n) fprintf(stderr, "%s", d.v[0].text);
  hlc_diags_clear(&d);
  ck_assert_ptr_nonnull(m);
  return m;
}

static const HloInstr *find(const HloModule *m, const char *name) {
  for (int32_t i = 0; i < m->entry->ninstrs; i++)
    if (!strcmp(m->entry->instrs[i]->name, name)) return m->entry->instrs[i];
  ck_abort_msg("no instruction %s", name);
  return NULL;
}

/* The group of device (r, p) as text "a,b,c@rank". */
static void group_text(const HloInstr *ins, int64_t R, int64_t P, int64_t r, int64_t p, char *out) {
  int64_t devs[64];
  int n, rank;
  char why[256];
  int rc = hlp_device_group(ins, R, P, r, p, devs, &n, &rank, why, sizeof why);
  if (rc <= 0) { sprintf(out, rc == 0 ? "none" : "error: %s", why); return; }
  out[0] = 0;
  for (int i = 0; i < n; i++) sprintf(out + strlen(out), "%s%lld", i ? "," : "", (long long)devs[i]);
  sprintf(out + strlen(out), "@%d", rank);
}

static const char *const modes_text =
    "HloModule g, replica_count=2, num_partitions=3\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "ENTRY e { x = f32[6] parameter(0)\n"
    " cr = f32[6] all-reduce(x), replica_groups={{1,0}}, to_apply=add\n"
    " cp = f32[6] all-to-all(x), dimensions={0}, replica_groups={{2,0},{1}}, channel_id=1\n"
    " crp = f32[6] all-reduce(x), replica_groups={{1,0}}, channel_id=2, to_apply=add\n"
    " fl = f32[6] all-reduce(x), replica_groups=[2,3]<=[3,2]T(1,0), channel_id=3, "
    "use_global_device_ids=true, to_apply=add\n"
    " pm = f32[6] collective-permute(x), source_target_pairs={{0,2}}, channel_id=4\n"
    " ROOT t = (f32[6], f32[6], f32[6], f32[6], f32[6]) tuple(cr, cp, crp, fl, pm) }\n";

/* 2 replicas x 3 partitions, device = 3 * replica + partition. */
START_TEST(group_modes) {
  HloModule *m = parse(modes_text);
  char g[256];
  /* cross-replica {{1,0}}: replicas 1 then 0 of the same partition. */
  ck_assert_int_eq(hlp_group_mode(find(m, "cr")), HLP_CROSS_REPLICA);
  group_text(find(m, "cr"), 2, 3, 0, 2, g);
  ck_assert_str_eq(g, "5,2@1");
  /* cross-partition {{2,0},{1}}: partitions of the same replica. */
  ck_assert_int_eq(hlp_group_mode(find(m, "cp")), HLP_CROSS_PARTITION);
  group_text(find(m, "cp"), 2, 3, 1, 0, g);
  ck_assert_str_eq(g, "5,3@1");
  group_text(find(m, "cp"), 2, 3, 1, 1, g);
  ck_assert_str_eq(g, "4@0");
  /* cross-replica-and-partition {{1,0}}: for r in {1,0}, every partition. */
  ck_assert_int_eq(hlp_group_mode(find(m, "crp")), HLP_CROSS_REPLICA_AND_PARTITION);
  group_text(find(m, "crp"), 2, 3, 0, 1, g);
  ck_assert_str_eq(g, "3,4,5,0,1,2@4");
  /* flattened [2,3]<=[3,2]T(1,0): arange(6) as 3x2, transposed to 2x3 =
   * {{0,2,4},{1,3,5}}. */
  ck_assert_int_eq(hlp_group_mode(find(m, "fl")), HLP_FLATTENED_ID);
  group_text(find(m, "fl"), 2, 3, 1, 0, g);
  ck_assert_str_eq(g, "1,3,5@1");   /* device 3 is second */
  /* collective-permute with a channel: every partition of the replica. */
  group_text(find(m, "pm"), 2, 3, 1, 2, g);
  ck_assert_str_eq(g, "3,4,5@2");
  hlp_module_free(m);
  /* The smallest grid a header-less module needs: partition ids 0-2 (a
   * permute with a channel), replica ids 0-1 (groups without one). */
  m = parse("HloModule h\n"
            "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
            "ENTRY e { x = f32[2] parameter(0)\n"
            " p = f32[2] collective-permute(x), source_target_pairs={{0,2}}, channel_id=1\n"
            " ROOT r = f32[2] all-reduce(p), replica_groups={{0,1}}, to_apply=add }\n");
  int64_t R, P;
  hlp_devices_needed(m, &R, &P);
  ck_assert_int_eq(R, 2);
  ck_assert_int_eq(P, 3);
  hlp_module_free(m);
}
END_TEST

START_TEST(group_checks) {
  HloModule *m = parse(modes_text);
  char why[256];
  ck_assert_int_eq(hlp_check_groups(find(m, "cr"), 2, 3, why, sizeof why), 0);
  /* On 3 replicas, {{1,0}} leaves replica 2 out. */
  ck_assert_int_eq(hlp_check_groups(find(m, "cr"), 3, 3, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "replica 2 is in none"));
  /* On 2 partitions, partition 2 does not exist. */
  ck_assert_int_eq(hlp_check_groups(find(m, "cp"), 2, 2, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "names partition 2"));
  ck_assert_int_eq(hlp_check_groups(find(m, "pm"), 2, 2, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "names partition 2"));
  hlp_module_free(m);
}
END_TEST

/* ---- shardings ----------------------------------------------------------------- */

/* The mesh form of replica_groups (XLA's MeshAxesReplicaGroupList,
 * xla/hlo/ir/replica_group.cc): every expected list is worked out by hand
 * from its definition -- flattened_replica_groups reshapes each mesh axis
 * so each referenced sub-axis "x":(p)s is a dimension of its own ([p, s,
 * n/(p*s)] for one; for several, sorted by p with padding and suffix
 * dimensions, the comment of GetDimToReshapeAndAggregateAxes: @mesh<"a"=8>
 * {a:(1)2} -> [1,2,4] over [1], {a:(1)2, a:(4)2} -> [2,2,2] over [0,2]),
 * then get_replica_groups_for_full_axes transposes the ungrouped
 * dimensions first and the grouped ones last in the refs' order and cuts
 * the device array into groups. Device ids are row-major over the mesh
 * axes (iota unless device_ids says otherwise). */
static void mesh_text(int32_t naxes, const int64_t *sizes, const int64_t *ids, int32_t nrefs,
                      const HlpMeshAxisRef *refs, char *out) {
  int64_t total = 1, gs = 0, flat[64];
  char why[200];
  for (int32_t i = 0; i < naxes; i++) total *= sizes[i];
  if (hlp_mesh_groups(naxes, sizes, ids, nrefs, refs, flat, &gs, why, sizeof why) != 0) {
    sprintf(out, "error: %s", why);
    return;
  }
  out[0] = 0;
  for (int64_t i = 0; i < total; i++)
    sprintf(out + strlen(out), "%s%lld", i == 0 ? "{" : i % gs == 0 ? "},{" : ",", (long long)flat[i]);
  strcat(out, "}");
}

START_TEST(mesh_groups) {
  char g[512];
  const int64_t ab[2] = {2, 4}, x8[1] = {8}, a2b2[2] = {2, 2};
  /* mesh[a=2,b=4]: device a*4+b. Over b: rows; over a: columns. */
  mesh_text(2, ab, NULL, 1, (HlpMeshAxisRef[]){{1, 0, 0}}, g);
  ck_assert_str_eq(g, "{0,1,2,3},{4,5,6,7}");
  mesh_text(2, ab, NULL, 1, (HlpMeshAxisRef[]){{0, 0, 0}}, g);
  ck_assert_str_eq(g, "{0,4},{1,5},{2,6},{3,7}");
  /* {a,b}: one group in row-major order; {b,a}: b major within the group. */
  mesh_text(2, ab, NULL, 2, (HlpMeshAxisRef[]){{0, 0, 0}, {1, 0, 0}}, g);
  ck_assert_str_eq(g, "{0,1,2,3,4,5,6,7}");
  mesh_text(2, ab, NULL, 2, (HlpMeshAxisRef[]){{1, 0, 0}, {0, 0, 0}}, g);
  ck_assert_str_eq(g, "{0,4,1,5,2,6,3,7}");
  /* No refs: groups of one device each. */
  mesh_text(2, ab, NULL, 0, NULL, g);
  ck_assert_str_eq(g, "{0},{1},{2},{3},{4},{5},{6},{7}");
  /* mesh[x=8]: x:(1)2 -> [1,2,4], device 4*i1 + i2, over i1. */
  mesh_text(1, x8, NULL, 1, (HlpMeshAxisRef[]){{0, 1, 2}}, g);
  ck_assert_str_eq(g, "{0,4},{1,5},{2,6},{3,7}");
  /* x:(2)2 -> [2,2,2], device 4*i0 + 2*i1 + i2, over i1. */
  mesh_text(1, x8, NULL, 1, (HlpMeshAxisRef[]){{0, 2, 2}}, g);
  ck_assert_str_eq(g, "{0,2},{1,3},{4,6},{5,7}");
  /* x:(4)2 -> [4,2,1], device 2*i0 + i1, over i1. */
  mesh_text(1, x8, NULL, 1, (HlpMeshAxisRef[]){{0, 4, 2}}, g);
  ck_assert_str_eq(g, "{0,1},{2,3},{4,5},{6,7}");
  /* x:(1)2, x:(4)2 -> [2,2,2] over [0,2]; the group runs i0 then i2. */
  mesh_text(1, x8, NULL, 2, (HlpMeshAxisRef[]){{0, 1, 2}, {0, 4, 2}}, g);
  ck_assert_str_eq(g, "{0,1,4,5},{2,3,6,7}");
  /* x:(4)2, x:(1)2: the same dimensions, grouped over [2,0] (the refs' order). */
  mesh_text(1, x8, NULL, 2, (HlpMeshAxisRef[]){{0, 4, 2}, {0, 1, 2}}, g);
  ck_assert_str_eq(g, "{0,4,1,5},{2,6,3,7}");
  /* mesh[a=2,b=4] {b:(2)2, a}: dims [2 | 2,2,1], grouped [2,0];
   * device 4*i0 + 2*i1 + i2, groups per i1 over (i2, i0). */
  mesh_text(2, ab, NULL, 2, (HlpMeshAxisRef[]){{1, 2, 2}, {0, 0, 0}}, g);
  ck_assert_str_eq(g, "{0,4,1,5},{2,6,3,7}");
  /* device_ids=(3,1,2,0): the array [[3,1],[2,0]]; over a: its columns. */
  mesh_text(2, a2b2, (const int64_t[]){3, 1, 2, 0}, 1, (HlpMeshAxisRef[]){{0, 0, 0}}, g);
  ck_assert_str_eq(g, "{3,2},{1,0}");
  /* maximal_mesh[device_id=5] {}: the one device. */
  mesh_text(0, NULL, (const int64_t[]){5}, 0, NULL, g);
  ck_assert_str_eq(g, "{5}");
  /* ValidateSpanOfAxes / AxisRef::Validate (mesh_and_axis.cc) refusals. */
  mesh_text(1, x8, NULL, 2, (HlpMeshAxisRef[]){{0, 1, 2}, {0, 2, 2}}, g);   /* mergeable */
  ck_assert_msg(strstr(g, "can be merged"), "%s", g);
  mesh_text(1, x8, NULL, 2, (HlpMeshAxisRef[]){{0, 0, 0}, {0, 1, 2}}, g);   /* whole + sub */
  ck_assert_msg(strstr(g, "overlap"), "%s", g);
  mesh_text(1, x8, NULL, 2, (HlpMeshAxisRef[]){{0, 2, 2}, {0, 1, 4}}, g);   /* overlap */
  ck_assert_msg(strstr(g, "overlap"), "%s", g);
  mesh_text(1, x8, NULL, 1, (HlpMeshAxisRef[]){{0, 1, 3}}, g);              /* 3 does not divide 8 */
  ck_assert_msg(strstr(g, "does not divide"), "%s", g);
  mesh_text(1, x8, NULL, 1, (HlpMeshAxisRef[]){{0, 1, 8}}, g);              /* not a proper sub-axis */
  ck_assert_msg(strstr(g, "less than the axis size"), "%s", g);
  mesh_text(1, x8, NULL, 1, (HlpMeshAxisRef[]){{0, 2, 1}}, g);              /* size 1 */
  ck_assert_msg(strstr(g, "size > 1"), "%s", g);
}
END_TEST

/* The same through the parser: the text forms, the groups they expand to,
 * --print's text, and positioned errors for malformed ones. */
static const char *mesh_module(const char *groups, char *buf) {
  sprintf(buf, "HloModule g, replica_count=4\n"
          "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
          "ENTRY e { x = f32[2] parameter(0)\n"
          " ROOT r = f32[2] all-reduce(x), replica_groups=%s, to_apply=add }\n", groups);
  return buf;
}

static void parsed_groups(const char *groups, char *out) {
  char text[1024];
  HlcDiags d = {0};
  mesh_module(groups, text);
  HloModule *m = hlp_parse(text, strlen(text), "t.hlo", &d);
  if (!m) {
    sprintf(out, "error: %s", d.n ? d.v[0].text : "?");
    hlc_diags_clear(&d);
    return;
  }
  hlc_diags_clear(&d);
  const HloInstr *r = find(m, "r");
  out[0] = 0;
  for (int32_t i = 0; i < r->ngroups; i++)
    for (int32_t j = 0; j < r->replica_groups[i].n; j++)
      sprintf(out + strlen(out), "%s%lld", j ? "," : i ? "},{" : "{", (long long)r->replica_groups[i].v[j]);
  strcat(out, "}");
  hlp_module_free(m);
}

START_TEST(mesh_parse) {
  char g[1024];
  parsed_groups("mesh['a'=2,'b'=2] {'b'}", g);
  ck_assert_str_eq(g, "{0,1},{2,3}");
  parsed_groups("mesh[a=2,b=2] {a}", g);            /* bare names, as earlier XLA printed */
  ck_assert_str_eq(g, "{0,2},{1,3}");
  parsed_groups("mesh['x'=4] {'x':(2)2}", g);       /* [2,2,1] over [1] */
  ck_assert_str_eq(g, "{0,1},{2,3}");
  parsed_groups("mesh[x=4] {x:(1)2}", g);           /* [1,2,2] over [1] */
  ck_assert_str_eq(g, "{0,2},{1,3}");
  parsed_groups("mesh['a'=2,'b'=2], device_ids=(3,1,2,0) {'a'}", g);
  ck_assert_str_eq(g, "{3,2},{1,0}");
  /* device_ids=([2,2]T(1,0)): iota [[0,1],[2,3]] transposed = [[0,2],[1,3]]. */
  parsed_groups("mesh['a'=2,'b'=2], device_ids=([2,2]T(1,0)) {'b'}", g);
  ck_assert_str_eq(g, "{0,2},{1,3}");
  parsed_groups("mesh['a'=2,'b'=2] {'b','a'}", g);
  ck_assert_str_eq(g, "{0,2,1,3}");
  /* As JAX writes it, with axes of size 1: device 2*a0 + a1, over axis_0. */
  parsed_groups("mesh['axis_0'=2,'axis_1'=2,'axis_2'=1,'axis_3'=1] {'axis_0'}", g);
  ck_assert_str_eq(g, "{0,2},{1,3}");
  /* No refs: every device alone (a group of one, XLA's no-op reduce). */
  parsed_groups("mesh['a'=4] {}", g);
  ck_assert_str_eq(g, "{0},{1},{2},{3}");
  parsed_groups("maximal_mesh[device_id=3] {}", g);
  ck_assert_str_eq(g, "{3}");
  /* Malformed: a positioned error naming the fault, never a crash. */
  parsed_groups("mesh['a'=2,'b'=2] {'c'}", g);
  ck_assert_msg(strstr(g, "t.hlo:6:67:") && strstr(g, "no axis 'c'"), "%s", g);
  parsed_groups("mesh['a'=2,'a'=2] {'a'}", g);
  ck_assert_msg(strstr(g, "names this axis twice"), "%s", g);
  parsed_groups("mesh['a'=4]", g);
  ck_assert_msg(strstr(g, "expected {axes}"), "%s", g);
  parsed_groups("mesh['a'=4] {'a':(1)2,'a':(2)2}", g);
  ck_assert_msg(strstr(g, "can be merged"), "%s", g);
  parsed_groups("mesh['a'=2,'b'=2], device_ids=(0,1,2) {'a'}", g);
  ck_assert_msg(strstr(g, "lists 3 ids, but the mesh has 4"), "%s", g);
  parsed_groups("mesh['a'=2,'b'=2], device_ids=(0,1,2,2) {'a'}", g);
  ck_assert_msg(strstr(g, "permutation"), "%s", g);
  parsed_groups("mesh['a'=0] {'a'}", g);
  ck_assert_msg(strstr(g, "must be positive"), "%s", g);
  parsed_groups("mesh[] {}", g);
  ck_assert_msg(strstr(g, "at least one axis"), "%s", g);
  parsed_groups("mesh['a'=4] {'a':(1)}", g);
  ck_assert_msg(strstr(g, "(pre-size)size"), "%s", g);
  parsed_groups("maximal_mesh[device_id=1, x=2] {}", g);
  ck_assert_msg(strstr(g, "maximal_mesh[device_id=D]"), "%s", g);
  /* --print writes the form as XLA's ToString: bare commas. */
  char text[1024];
  HlcDiags d = {0};
  mesh_module("mesh['a'=2, 'b'=2], device_ids=(3,1,2,0) {'b', 'a'}", text);
  HloModule *m = hlp_parse(text, strlen(text), "t.hlo", &d);
  ck_assert_ptr_nonnull(m);
  size_t plen;
  char *printed = hlp_print(m, &plen);
  ck_assert_msg(strstr(printed, "replica_groups=mesh['a'=2,'b'=2], device_ids=(3,1,2,0) {'b','a'}, "),
                "%s", printed);
  free(printed);
  hlp_module_free(m);
  hlc_diags_clear(&d);
}
END_TEST

/* A 2x4 value split over 2 partitions by columns and 2 replicas, then put
 * back together. */
START_TEST(shard_and_assemble) {
  HloCtx *ctx = tl_ctx_new(1);
  const char *text =
      "HloModule s, replica_count=2, num_partitions=2\n"
      "ENTRY e { x = s32[2,2] parameter(0), sharding={devices=[1,2]<=[2]}\n"
      " ROOT y = s32[2,2] copy(x), sharding={devices=[1,2]<=[2]} }\n";
  HloModule *m;
  ck_assert_int_eq(hlo_module_parse(ctx, text, strlen(text), "s.hlo", &m), HLO_OK);
  int32_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};   /* {{1,2,3,4},{5,6,7,8}} */
  int64_t dims[2] = {2, 4};
  HloBuffer *g, *dev[4], *back;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_S32, dims, 2, v, &g), HLO_OK);
  ck_assert_int_eq(hlo_shard_param(ctx, m, 0, g, 2, 2, dev), HLO_OK);
  /* Partition 0: columns 0-1; partition 1: columns 2-3; both replicas alike. */
  const int32_t *d1 = hlo_buffer_data(dev[1]), *d2 = hlo_buffer_data(dev[2]);
  ck_assert_int_eq(d1[0], 3);
  ck_assert_int_eq(d1[1], 4);
  ck_assert_int_eq(d1[2], 7);
  ck_assert_int_eq(d1[3], 8);
  ck_assert_int_eq(d2[0], 1);
  ck_assert_int_eq(d2[3], 6);
  ck_assert_int_eq(hlo_assemble_result(ctx, m, NULL, dev, 2, 2, &back), HLO_OK);
  ck_assert_int_eq(memcmp(hlo_buffer_data(back), v, sizeof v), 0);
  hlo_buffer_free(back);
  /* Replicas that disagree about a tile are an error, not one of them. */
  ((int32_t *)hlo_buffer_data(dev[3]))[0] = 99;
  ck_assert_int_ne(hlo_assemble_result(ctx, m, NULL, dev, 2, 2, &back), HLO_OK);
  ck_assert_ptr_nonnull(strstr(hlo_ctx_diagnostics(ctx), "devices 1 and 3"));
  for (int d = 0; d < 4; d++) hlo_buffer_free(dev[d]);
  hlo_buffer_free(g);
  hlp_module_free(m);
  hlo_ctx_free(ctx);
}
END_TEST

/* ---- running ----------------------------------------------------------------------- */

/* Device d holds x = {d + 0.1, d + 0.2, d + 0.3}; the all-reduce sums in
 * rank order 3, 2, 1, 0 as the group says: bits independent of threads. */
static void run_sum(int threads, float *out) {
  HloCtx *ctx = tl_ctx_new(threads);
  const char *text =
      "HloModule r, replica_count=4\n"
      "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "ENTRY e { x = f32[3] parameter(0)\n"
      " ROOT r = f32[3] all-reduce(x), replica_groups={{3,2,1,0}}, to_apply=add }\n";
  HloModule *m;
  ck_assert_int_eq(hlo_module_parse(ctx, text, strlen(text), "r.hlo", &m), HLO_OK);
  HloExecutable *e;
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &e), HLO_OK);
  ck_assert_int_eq(hlo_executable_num_devices(e), 4);
  HloBuffer *in[4], *res[4];
  int64_t n = 3;
  for (int d = 0; d < 4; d++) {
    float v[3] = {d + 0.1f, d + 0.2f, d + 0.3f};
    ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, &n, 1, v, &in[d]), HLO_OK);
  }
  /* hlo_execute runs one device: refused for a grid. */
  HloBuffer *one = NULL;
  ck_assert_int_eq(hlo_execute(e, in, 1, &one), HLO_INVALID_ARGUMENT);
  hlo_ctx_clear_diagnostics(ctx);
  ck_assert_int_eq(hlo_execute_devices(e, in, 1, res), HLO_OK);
  for (int d = 0; d < 4; d++) {
    const float *r = hlo_buffer_data(res[d]);
    ck_assert_int_eq(memcmp(r, hlo_buffer_data(res[0]), 12), 0);
  }
  memcpy(out, hlo_buffer_data(res[0]), 12);
  for (int d = 0; d < 4; d++) { hlo_buffer_free(in[d]); hlo_buffer_free(res[d]); }
  hlo_executable_free(e);
  hlp_module_free(m);
  hlo_ctx_free(ctx);
}

START_TEST(all_reduce_bits) {
  float a[3], b[3];
  run_sum(1, a);
  run_sum(3, b);
  ck_assert_int_eq(memcmp(a, b, sizeof a), 0);
  /* The fold in rank order: ((x3 + x2) + x1) + x0, in f32. */
  for (int i = 0; i < 3; i++) {
    float c = 0.1f * (float)(i + 1);
    float want = (((3 + c) + (2 + c)) + (1 + c)) + (0 + c);
    ck_assert_int_eq(memcmp(&a[i], &want, 4), 0);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("devices");
  TCase *t = tcase_create("devices");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, group_modes);
  tcase_add_test(t, group_checks);
  tcase_add_test(t, mesh_groups);
  tcase_add_test(t, mesh_parse);
  tcase_add_test(t, shard_and_assemble);
  tcase_add_test(t, all_reduce_bits);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tl_main(suite()); }

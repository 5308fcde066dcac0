/* check_ffi.c: the XLA FFI host: struct layouts, built-in targets, handlers
 * of every API generation (from tests/ffi_test_plugin.c, loaded with
 * dlopen), plugins and stages, futures completed on other threads, legacy
 * conventions, errors, tuples and tokens, attributes in the frame, the
 * instruction-members opt-in, explain and positioned errors. Expected values
 * are worked out by hand from spec/ffi.md and XLA's documented semantics. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include "ffi/internal.h"
#include "targets/targets.h"
#include "tests/testlib.h"

#ifndef FFI_TEST_PLUGIN
#error FFI_TEST_PLUGIN must name the test plugin
#endif

/* ---- Hand-built IR ----------------------------------------------------- */

static HloShape arr(HloDtype t, int rank, int64_t *dims) {
  HloShape s;
  memset(&s, 0, sizeof s);
  s.dtype = t;
  s.rank = rank;
  s.dims = dims;
  return s;
}

static HloShape tup(int n, HloShape *el) {
  HloShape s;
  memset(&s, 0, sizeof s);
  s.dtype = HLO_TUPLE;
  s.ntuple = n;
  s.tuple = el;
  return s;
}

static HloInstr cc(const char *target, int api, const char *cfg, HloShape result) {
  HloInstr i;
  memset(&i, 0, sizeof i);
  i.op = HLO_OP_CUSTOM_CALL;
  i.name = "cc";
  i.line = 7;
  i.custom_call_target = target;
  i.api_version = (HloApiVersion)api;
  i.backend_config = cfg;
  i.backend_config_len = cfg ? strlen(cfg) : 0;
  i.shape = result;
  i.feature_group_count = 1;
  i.batch_group_count = 1;
  return i;
}

static HlfBuf buf(HloDtype t, void *data, int rank, const int64_t *dims) {
  return (HlfBuf){t, data, rank, dims};
}

static HlfRegistry *reg_with(const char *target, const char *symbol) {
  HlfRegistry *r = hlf_registry_new();
  HlcDiags d = {0};
  ck_assert_int_eq(hlf_bind(r, target, FFI_TEST_PLUGIN, symbol, &d), 0);
  hlc_diags_clear(&d);
  return r;
}

/* Run ins with the given leaves; returns the error text (malloc'd) or NULL. */
static char *run(HlfRegistry *r, const HloInstr *ins, const HlfBuf *a, int na, const HlfBuf *b,
                 int nb) {
  char *err = NULL;
  int rc = hlf_call(r, NULL, ins, a, na, b, nb, &err);
  ck_assert_int_eq(rc != 0, err != NULL);
  return err;
}

/* Calls target on r with no operands and an f32[] result: it must fail
 * with exactly msg. */
static void expect_call_error(HlfRegistry *r, const char *target, const char *msg) {
  HloInstr ins = cc(target, HLO_API_TYPED_FFI, NULL, arr(HLO_F32, 0, NULL));
  float y;
  HlfBuf b = buf(HLO_F32, &y, 0, NULL);
  char *e = run(r, &ins, NULL, 0, &b, 1);
  ck_assert_str_eq(e, msg);
  free(e);
}

/* ---- Layouts ------------------------------------------------------------ */

START_TEST(test_layouts) {
  ck_assert_uint_eq(sizeof(XLA_FFI_Extension_Base), 24);
  ck_assert_uint_eq(XLA_FFI_Api_Version_STRUCT_SIZE, 24);
  ck_assert_uint_eq(sizeof(XLA_FFI_ByteSpan), 16);
  ck_assert_uint_eq(sizeof(XLA_FFI_Scalar), 16);
  ck_assert_uint_eq(sizeof(XLA_FFI_Array), 24);
  ck_assert_uint_eq(offsetof(XLA_FFI_Array, data), 16);
  ck_assert_uint_eq(XLA_FFI_Buffer_STRUCT_SIZE, 48);
  ck_assert_uint_eq(offsetof(XLA_FFI_Buffer, rank), 32);
  ck_assert_uint_eq(XLA_FFI_Args_STRUCT_SIZE, 40);
  ck_assert_uint_eq(XLA_FFI_Rets_STRUCT_SIZE, 40);
  ck_assert_uint_eq(XLA_FFI_Attrs_STRUCT_SIZE, 48);
  ck_assert_uint_eq(offsetof(XLA_FFI_Attrs, names), 32);
  ck_assert_uint_eq(sizeof(XLA_FFI_CallFrame), 176);
  ck_assert_uint_eq(XLA_FFI_CallFrame_STRUCT_SIZE, 168);
  ck_assert_uint_eq(offsetof(XLA_FFI_CallFrame, stage), 32);
  ck_assert_uint_eq(offsetof(XLA_FFI_CallFrame, args), 40);
  ck_assert_uint_eq(offsetof(XLA_FFI_CallFrame, rets), 80);
  ck_assert_uint_eq(offsetof(XLA_FFI_CallFrame, attrs), 120);
  ck_assert_uint_eq(offsetof(XLA_FFI_CallFrame, future), 168);
  ck_assert_uint_eq(XLA_FFI_Error_Create_Args_STRUCT_SIZE, 28);
  ck_assert_uint_eq(XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE, 32);
  ck_assert_uint_eq(XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, 24);
  ck_assert_uint_eq(XLA_FFI_Handler_Register_Args_STRUCT_SIZE, 84);
  ck_assert_uint_eq(offsetof(XLA_FFI_Handler_Register_Args, bundle), 48);
  ck_assert_uint_eq(XLA_FFI_Stream_Get_Args_STRUCT_SIZE, 32);
  ck_assert_uint_eq(XLA_FFI_Type_Register_Args_STRUCT_SIZE, 40);
  ck_assert_uint_eq(offsetof(XLA_FFI_Type_Register_Args, type_info), 40);
  ck_assert_uint_eq(XLA_FFI_TypeInfo_STRUCT_SIZE, 24);
  ck_assert_uint_eq(XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE, 40);
  ck_assert_uint_eq(XLA_FFI_State_Set_Args_STRUCT_SIZE, 48);
  ck_assert_uint_eq(offsetof(XLA_FFI_State_Set_Args, stage), 24);
  ck_assert_uint_eq(offsetof(XLA_FFI_State_Set_Args, type_id), 32);
  ck_assert_uint_eq(XLA_FFI_State_Get_Args_STRUCT_SIZE, 48);
  ck_assert_uint_eq(XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE, 48);
  ck_assert_uint_eq(XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE, 40);
  ck_assert_uint_eq(XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE, 40);
  ck_assert_uint_eq(XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE, 32);
  ck_assert_uint_eq(XLA_FFI_Future_Create_Args_STRUCT_SIZE, 16);
  ck_assert_uint_eq(XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE, 24);
  ck_assert_uint_eq(XLA_FFI_Future_SetError_Args_STRUCT_SIZE, 32);
  ck_assert_uint_eq(XLA_FFI_RunId_Get_Args_STRUCT_SIZE, 32);
  ck_assert_uint_eq(XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE, 28);
  ck_assert_uint_eq(XLA_FFI_Metadata_STRUCT_SIZE, 36);
  ck_assert_uint_eq(offsetof(XLA_FFI_Metadata, state_type_id), 40);
  ck_assert_uint_eq(XLA_FFI_Metadata_Extension_STRUCT_SIZE, 32);
  ck_assert_uint_eq(sizeof(XLA_FFI_Api), 192);
  ck_assert_uint_eq(offsetof(XLA_FFI_Api, internal_api), 40);
  ck_assert_uint_eq(offsetof(XLA_FFI_Api, XLA_FFI_Future_Create), 48 + 13 * 8);
  /* Every generation's table reports its version and has all 18 slots. */
  for (int minor = 1; minor <= 3; minor++) {
    const XLA_FFI_Api *api = hlf_api(minor);
    ck_assert_uint_eq(api->struct_size, 192);
    ck_assert_int_eq(api->api_version.major_version, 0);
    ck_assert_int_eq(api->api_version.minor_version, minor);
    ck_assert_ptr_null(api->internal_api);
    for (int k = 0; k < 18; k++) {
      void *fn;
      memcpy(&fn, (const char *)api + 48 + 8 * k, sizeof fn);
      ck_assert_ptr_nonnull(fn);
    }
  }
}
END_TEST

/* ---- Built-ins: XLA's own targets (targets/xla/) ------------------------- */

START_TEST(test_builtin_identity) {
  HlfRegistry *r = hlf_registry_new();
  ck_assert_ptr_null(hlf_find_target(r, "Sharding"));   /* a registry starts empty */
  ck_assert_int_eq(hlt_register_xla(r), 0);
  int64_t d3[] = {3};
  HloShape el[2] = {arr(HLO_F32, 1, d3), arr(HLO_S32, 0, NULL)};
  HloInstr ins = cc("Sharding", HLO_API_ORIGINAL, NULL, tup(2, el));
  float x[3] = {1, -2, 3.5f}, y[3] = {0};
  int32_t s = 42, t = 0;
  HlfBuf a[2] = {buf(HLO_F32, x, 1, d3), buf(HLO_S32, &s, 0, NULL)};
  HlfBuf b[2] = {buf(HLO_F32, y, 1, d3), buf(HLO_S32, &t, 0, NULL)};
  ck_assert_ptr_null(run(r, &ins, a, 2, b, 2));
  ck_assert(y[0] == 1 && y[1] == -2 && y[2] == 3.5f && t == 42);
  /* On one device the SPMD shape changes cannot happen: a clear error. */
  int64_t d2[] = {2};
  HloInstr sh = cc("SPMDFullToShardShape", HLO_API_ORIGINAL, NULL, arr(HLO_F32, 1, d2));
  HlfBuf bb = buf(HLO_F32, y, 1, d2);
  char *e = run(r, &sh, a, 1, &bb, 1);
  ck_assert_str_eq(e, "handler of custom-call target \"SPMDFullToShardShape\" failed: this "
                      "annotation changes the shape from f32[3] to f32[2]; hlorun runs one "
                      "device, where it must be an identity");
  free(e);
  for (const char *const *n = (const char *const[]){"MoveToHost", "MoveToDevice",
                                                    "SPMDShardToFullShape", NULL}; *n; n++)
    ck_assert_int_eq(hlf_find_target(r, *n)->source, HLF_SRC_BUILTIN);
  hlf_registry_free(r);
}
END_TEST

START_TEST(test_builtin_topk) {
  HlfRegistry *r = hlf_registry_new();
  ck_assert_int_eq(hlt_register_xla(r), 0);
  int64_t dx[] = {2, 5}, dk[] = {2, 3};
  HloShape el[2] = {arr(HLO_F32, 2, dk), arr(HLO_S32, 2, dk)};
  HloInstr ins = cc("TopK", HLO_API_ORIGINAL, NULL, tup(2, el));
  float x[10] = {1, 3, 3, -0.0f, 2, NAN, -INFINITY, 0.0f, -0.0f, 5};
  float v[6];
  int32_t ix[6];
  HlfBuf a = buf(HLO_F32, x, 2, dx);
  HlfBuf b[2] = {buf(HLO_F32, v, 2, dk), buf(HLO_S32, ix, 2, dk)};
  ck_assert_ptr_null(run(r, &ins, &a, 1, b, 2));
  /* Row 0: 3 (index 1) before the tied 3 (index 2), then 2. */
  ck_assert(v[0] == 3 && v[1] == 3 && v[2] == 2);
  ck_assert(ix[0] == 1 && ix[1] == 2 && ix[2] == 4);
  /* Row 1: NaN is largest, then 5, then +0 (above -0). */
  ck_assert(isnan(v[3]) && v[4] == 5 && v[5] == 0 && !signbit(v[5]));
  ck_assert(ix[3] == 0 && ix[4] == 4 && ix[5] == 2);
  /* s32, k = 2 */
  int64_t dxi[] = {4}, dki[] = {2};
  HloShape eli[2] = {arr(HLO_S32, 1, dki), arr(HLO_S32, 1, dki)};
  HloInstr ins2 = cc("TopK", HLO_API_TYPED_FFI, NULL, tup(2, eli));
  int32_t xi[4] = {5, -1, 5, 7}, vi[2], ii[2];
  HlfBuf ai = buf(HLO_S32, xi, 1, dxi);
  HlfBuf bi[2] = {buf(HLO_S32, vi, 1, dki), buf(HLO_S32, ii, 1, dki)};
  ck_assert_ptr_null(run(r, &ins2, &ai, 1, bi, 2));
  ck_assert(vi[0] == 7 && ii[0] == 3 && vi[1] == 5 && ii[1] == 0);
  /* Its working memory, counted before the call: one row of n = 5 int64
   * keys and two s32 index arrays; none for the identity annotations. */
  ck_assert_uint_eq(hlf_builtin_scratch(r, &ins, &a, 1), 5 * (8 + 2 * 4));
  HloInstr sh = cc("Sharding", HLO_API_ORIGINAL, NULL, arr(HLO_F32, 2, dx));
  ck_assert_uint_eq(hlf_builtin_scratch(r, &sh, &a, 1), 0);
  /* A user's handler in its place is not counted. */
  XLA_FFI_Handler_Bundle mine = {NULL, NULL, NULL, hlf_find_target(r, "Sharding")->bundle.execute};
  ck_assert_int_eq(hlf_register_handler(r, "TopK", &mine, NULL), 0);
  ck_assert_uint_eq(hlf_builtin_scratch(r, &ins, &a, 1), 0);
  hlf_registry_free(r);
}
END_TEST

/* ---- Binding and errors -------------------------------------------------- */

START_TEST(test_unbound) {
  HlfRegistry *r = hlf_registry_new();
  HloInstr ins = cc("nope", HLO_API_TYPED_FFI, NULL, arr(HLO_F32, 0, NULL));
  char *e = NULL;
  ck_assert_int_eq(hlf_check(r, NULL, &ins, &e), -1);
  ck_assert_str_eq(e, "custom-call target \"nope\" (line 7) has no handler; bind one with "
                      "--custom-call nope=LIB.so[:SYMBOL] or load a plugin that registers it "
                      "with --plugin LIB.so[:FUNCTION]");
  free(e);
  hlf_registry_free(r);
}
END_TEST

START_TEST(test_bind_errors) {
  HlfRegistry *r = hlf_registry_new();
  HlcDiags d = {0};
  ck_assert_int_eq(hlf_bind(r, "t", "/nonexistent/libx.so", NULL, &d), -1);
  ck_assert_int_eq(d.nerrors, 1);
  ck_assert(strncmp(d.v[0].message, "cannot load /nonexistent/libx.so: ", 34) == 0);
  hlc_diags_clear(&d);
  ck_assert_int_eq(hlf_bind(r, "t", FFI_TEST_PLUGIN, "zzz", &d), -1);
  ck_assert(strstr(d.v[0].message, "has no symbol 'zzz'"));
  hlc_diags_clear(&d);
  ck_assert_int_eq(hlf_load_plugin(r, FFI_TEST_PLUGIN, "missing_init", &d), -1);
  ck_assert(strstr(d.v[0].message, "no registration function 'missing_init'"));
  hlc_diags_clear(&d);
  ck_assert_int_eq(hlf_load_plugin(r, FFI_TEST_PLUGIN, "bad_init", &d), -1);
  ck_assert(strstr(d.v[0].message, "bad_init failed: this plugin refuses to register"));
  hlc_diags_clear(&d);
  hlf_registry_free(r);
}
END_TEST

/* A library that registers handlers while it loads (XLA_FFI_REGISTER_HANDLER
 * with xla::ffi::GetXlaFfiApi()) loads, and its handlers are bound. */
START_TEST(test_register_at_load) {
  HlfRegistry *r = reg_with("unused", "fails");
  expect_call_error(r, "at_load", "handler of custom-call target \"at_load\" failed: boom: the "
                                  "input is not what I wanted");
  const XLA_FFI_Api *api = hlf_xla_get_ffi_api();
  ck_assert_int_eq(api->api_version.major_version, 0);
  ck_assert_int_eq(api->api_version.minor_version, 3);
  hlf_registry_free(r);
}
END_TEST

/* The table a registration function gets must take both type registration
 * layouts, which share struct_size 40: 0.1's {name, type_id} (whatever lies
 * after it is the caller's stack) and 0.2/0.3's {name, type_id, type_info}. */
static int typeinfo_deleted;
static void typeinfo_delete(void *p) { free(p); typeinfo_deleted++; }
static void not_a_deleter(void) {}

START_TEST(test_register_type_either_layout) {
  const XLA_FFI_Api *api = hlf_api(0);
  struct {
    size_t struct_size; void *ext; XLA_FFI_ByteSpan name; XLA_FFI_TypeId *type_id;
    const void *after;   /* a 0.1 caller's garbage, or 0.3's type_info */
  } a;
  static const char junk[64] = {1, 2, 3};
  void (*code)(void) = not_a_deleter;
  const void *garbage[] = {(const void *)16, (const void *)(uintptr_t)0x7ffffffff000ull, junk,
                           NULL};
  memcpy(&garbage[3], &code, sizeof code);   /* points into code, as seen on a real stack */
  char name[32];
  for (size_t i = 0; i < sizeof garbage / sizeof *garbage; i++) {
    XLA_FFI_TypeId id = {0};
    snprintf(name, sizeof name, "regtest.v01.%zu", i);
    a = (typeof(a)){40, NULL, {name, strlen(name)}, &id, garbage[i]};
    ck_assert_ptr_null(api->XLA_FFI_Type_Register((XLA_FFI_Type_Register_Args *)&a));
    ck_assert_int_gt(id.type_id, 0);
    ck_assert_int_eq(hlf_type_id(name), id.type_id);
    HlfState st = {true, id.type_id, malloc(4), free};   /* its own deleter (0.1 style) */
    hlf_state_clear(&st);
  }
  XLA_FFI_TypeInfo info = {XLA_FFI_TypeInfo_STRUCT_SIZE, NULL, typeinfo_delete};
  XLA_FFI_TypeId id = {0};
  a = (typeof(a)){40, NULL, {"regtest.v03", 11}, &id, &info};
  ck_assert_ptr_null(api->XLA_FFI_Type_Register((XLA_FFI_Type_Register_Args *)&a));
  ck_assert_int_gt(id.type_id, 0);
  HlfState st = {true, id.type_id, malloc(4), NULL};   /* deleted by the type's deleter */
  hlf_state_clear(&st);
  ck_assert_int_eq(typeinfo_deleted, 1);
}
END_TEST

START_TEST(test_handler_error) {
  HlfRegistry *r = reg_with("fails", NULL);
  expect_call_error(r, "fails", "handler of custom-call target \"fails\" failed: boom: the input "
                                "is not what I wanted");
  hlf_registry_free(r);
}
END_TEST

START_TEST(test_version_rejected) {
  HlfRegistry *r = reg_with("nm", "no_metadata");
  HlcDiags d = {0};
  ck_assert_int_eq(hlf_bind(r, "v4", FFI_TEST_PLUGIN, "v04", &d), 0);
  HloInstr a = cc("nm", HLO_API_TYPED_FFI, NULL, arr(HLO_F32, 0, NULL));
  HloInstr b = cc("v4", HLO_API_TYPED_FFI, NULL, arr(HLO_F32, 0, NULL));
  char *e = NULL;
  ck_assert_int_eq(hlf_check(r, NULL, &a, &e), -1);
  ck_assert(strstr(e, "unsupported XLA FFI API version 0.0; hlorun supports 0.1-0.3 (the handler "
                      "left its version unset"));
  free(e);
  ck_assert_int_eq(hlf_check(r, NULL, &b, &e), -1);
  ck_assert(strstr(e, "(" FFI_TEST_PLUGIN ":v04) unsupported XLA FFI API version 0.4; hlorun "
                      "supports 0.1-0.3"));
  free(e);
  hlf_registry_free(r);
}
END_TEST

/* ---- API generations ------------------------------------------------------ */

typedef int IntFn(void);
static int plugin_int(const char *fn) {
  void *h = dlopen(FFI_TEST_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
  ck_assert_ptr_nonnull(h);
  IntFn *f;
  *(void **)&f = dlsym(h, fn);
  ck_assert_ptr_nonnull(f);
  int v = f();
  dlclose(h);
  return v;
}

/* Frees r, which must run one state deleter of the plugin on the way
 * (ffitest_deleted counts them). */
static void free_expect_deleted(HlfRegistry *r) {
  int before = plugin_int("ffitest_deleted");
  void *keep = dlopen(FFI_TEST_PLUGIN, RTLD_NOW);   /* so the count outlives the registry */
  hlf_registry_free(r);
  IntFn *f;
  *(void **)&f = dlsym(keep, "ffitest_deleted");
  ck_assert_int_eq(f(), before + 1);
  dlclose(keep);
}

START_TEST(test_v01_15slot) {
  HlfRegistry *r = reg_with("v01_15", NULL);
  HloInstr ins = cc("v01_15", HLO_API_TYPED_FFI, NULL, arr(HLO_S64, 0, NULL));
  int64_t out = 0;
  HlfBuf b = buf(HLO_S64, &out, 0, NULL);
  ck_assert_ptr_null(run(r, &ins, NULL, 0, &b, 1));
  ck_assert_int_eq(out, 1);
  ck_assert_ptr_null(run(r, &ins, NULL, 0, &b, 1));
  ck_assert_int_eq(out, 2);   /* the state survived: one per call site */
  free_expect_deleted(r);     /* the 0.1 deleter ran */
}
END_TEST

START_TEST(test_v01_18slot_async) {
  HlfRegistry *r = reg_with("v01_18", NULL);
  hlf_set_num_threads(r, 3);
  hlf_set_run_id(r, 77);
  HloShape el[3] = {arr(HLO_S64, 0, NULL), arr(HLO_S64, 0, NULL), arr(HLO_S64, 0, NULL)};
  HloInstr ins = cc("v01_18", HLO_API_TYPED_FFI, NULL, tup(3, el));
  int64_t o[3] = {0, 0, 0};
  HlfBuf b[3] = {buf(HLO_S64, &o[0], 0, NULL), buf(HLO_S64, &o[1], 0, NULL),
                 buf(HLO_S64, &o[2], 0, NULL)};
  ck_assert_ptr_null(run(r, &ins, NULL, 0, b, 3));
  ck_assert_int_eq(o[0], 3);
  ck_assert_int_eq(o[1], 77);
  ck_assert_int_eq(o[2], 4242);   /* written by the worker before it completed the future */
  hlf_registry_free(r);
}
END_TEST

START_TEST(test_v02) {
  HlfRegistry *r = reg_with("v02", NULL);
  HloInstr ins = cc("v02", HLO_API_TYPED_FFI, NULL, arr(HLO_S64, 0, NULL));
  int64_t out = 0;
  HlfBuf b = buf(HLO_S64, &out, 0, NULL);
  ck_assert_ptr_null(run(r, &ins, NULL, 0, &b, 1));
  ck_assert_ptr_null(run(r, &ins, NULL, 0, &b, 1));
  ck_assert_int_eq(out, 2);
  free_expect_deleted(r);     /* TypeInfo's deleter ran */
}
END_TEST

START_TEST(test_plugin_stages) {
  HlfRegistry *r = hlf_registry_new();
  HlcDiags d = {0};
  ck_assert_int_eq(hlf_load_plugin(r, FFI_TEST_PLUGIN, NULL, &d), 0);
  ck_assert_ptr_nonnull(hlf_find_target(r, "staged"));
  ck_assert_ptr_null(hlf_find_target(r, "cuda_only"));   /* other platforms are not ours */
  int64_t d4[] = {4};
  HloInstr ins = cc("staged", HLO_API_TYPED_FFI, NULL, arr(HLO_S64, 1, d4));
  int64_t o[4];
  HlfBuf b = buf(HLO_S64, o, 1, d4);
  int inst0 = plugin_int("ffitest_instantiations");
  /* As XLA:CPU: instantiate, then execute only; this bundle's execute reads
   * the prepare stage's state, which nothing set. */
  char *e0 = run(r, &ins, NULL, 0, &b, 1);
  ck_assert_str_eq(e0, "handler of custom-call target \"staged\" failed: State_Get: no prepare "
                       "state is set");
  free(e0);
  ck_assert_int_eq(plugin_int("ffitest_instantiations"), inst0 + 1);
  /* As XLA:GPU: prepare and initialize before every execute. */
  hlf_set_all_stages(r, true);
  ck_assert_ptr_null(run(r, &ins, NULL, 0, &b, 1));
  ck_assert(o[0] == 100 && o[1] == 101 && o[2] == 102 && o[3] == 1);
  ck_assert_ptr_null(run(r, &ins, NULL, 0, &b, 1));
  ck_assert(o[0] == 100 && o[1] == 101 && o[2] == 102 && o[3] == 2);
  ck_assert_int_eq(plugin_int("ffitest_instantiations"), inst0 + 1);   /* once per call site */
  /* A second call site is instantiated on its own. */
  HloInstr ins2 = ins;
  ck_assert_ptr_null(run(r, &ins2, NULL, 0, &b, 1));
  ck_assert_int_eq(plugin_int("ffitest_instantiations"), inst0 + 2);
  /* A plugin's typed handler cannot be called with a legacy api_version. */
  HloInstr leg = cc("plugin_fails", HLO_API_STATUS_RETURNING, NULL, arr(HLO_S64, 1, d4));
  char *e = NULL;
  ck_assert_int_eq(hlf_check(r, NULL, &leg, &e), -1);
  ck_assert(strstr(e, "is a typed FFI handler registered by a plugin, but the instruction has "
                      "api_version=API_VERSION_STATUS_RETURNING"));
  free(e);
  hlf_registry_free(r);
}
END_TEST

START_TEST(test_async_error) {
  HlfRegistry *r = reg_with("v03_async_fail", NULL);
  expect_call_error(r, "v03_async_fail", "handler of custom-call target \"v03_async_fail\" "
                                         "failed: async failure from a worker thread");
  hlf_registry_free(r);
}
END_TEST

/* ---- Legacy ------------------------------------------------------------- */

START_TEST(test_legacy) {
  HlfRegistry *r = reg_with("add4", "legacy_v1");
  HlcDiags d = {0};
  ck_assert_int_eq(hlf_bind(r, "no", FFI_TEST_PLUGIN, "legacy_v2_fail", &d), 0);
  ck_assert_int_eq(hlf_bind(r, "v3", FFI_TEST_PLUGIN, "legacy_v3", &d), 0);
  int64_t d4[] = {4}, d8[] = {8};
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, o[4];
  HloInstr i1 = cc("add4", HLO_API_ORIGINAL, NULL, arr(HLO_F32, 1, d4));
  HlfBuf in[2] = {buf(HLO_F32, a, 1, d4), buf(HLO_F32, b, 1, d4)};
  HlfBuf out = buf(HLO_F32, o, 1, d4);
  ck_assert_ptr_null(run(r, &i1, in, 2, &out, 1));
  ck_assert(o[0] == 11 && o[1] == 22 && o[2] == 33 && o[3] == 44);
  HloInstr i2 = cc("no", HLO_API_STATUS_RETURNING, NULL, arr(HLO_F32, 1, d4));
  char *e = run(r, &i2, in, 2, &out, 1);
  ck_assert_str_eq(e, "handler of custom-call target \"no\" failed: legacy says no");
  free(e);
  /* v3: opaque is the raw backend_config; tuple result -> array of leaves. */
  HloShape el[2] = {arr(HLO_S64, 0, NULL), arr(HLO_U8, 1, d8)};
  HloInstr i3 = cc("v3", HLO_API_STATUS_RETURNING_UNIFIED, "\x01opaque\\", tup(2, el));
  i3.backend_config_len = 9;
  int64_t len = 0;
  uint8_t bytes[8];
  HlfBuf o3[2] = {buf(HLO_S64, &len, 0, NULL), buf(HLO_U8, bytes, 1, d8)};
  ck_assert_ptr_null(run(r, &i3, NULL, 0, o3, 2));
  ck_assert_int_eq(len, 9);
  ck_assert(memcmp(bytes, "\x01opaque\\", 8) == 0);
  hlf_registry_free(r);
}
END_TEST

/* ---- In-process handlers: frames, tuples, tokens, attributes ------------- */

static struct Seen {
  int64_t nargs, nrets, nattrs;
  int dtypes[8];
  void *data[8];
  int64_t rank[8];
  size_t frame_size, attrs_size;
  XLA_FFI_ExecutionStage stage;
  char names[8][24];
  int types[8];
  int64_t window_size[4];
  int nwindow;
  bool has_members;
} seen;

static XLA_FFI_Error *recorder(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;
  memset(&seen, 0, sizeof seen);
  seen.frame_size = f->struct_size;
  seen.stage = f->stage;
  seen.nargs = f->args.size;
  seen.nrets = f->rets.size;
  for (int64_t i = 0; i < f->args.size + f->rets.size && i < 8; i++) {
    XLA_FFI_Buffer *b = i < f->args.size ? f->args.args[i] : f->rets.rets[i - f->args.size];
    seen.dtypes[i] = b->dtype;
    seen.data[i] = b->data;
    seen.rank[i] = b->rank;
  }
  seen.attrs_size = f->attrs.struct_size;
  seen.nattrs = f->attrs.size;
  for (int64_t i = 0; i < f->attrs.size && i < 8; i++) {
    snprintf(seen.names[i], sizeof seen.names[i], "%.*s", (int)f->attrs.names[i]->len,
             f->attrs.names[i]->ptr);
    seen.types[i] = f->attrs.types[i];
  }
  XLA_FFI_Attrs *m = hlorun_ffi_attr(&f->attrs, HLORUN_FFI_INSTRUCTION_ATTR,
                                     XLA_FFI_AttrType_DICTIONARY);
  if (m) {
    seen.has_members = true;
    XLA_FFI_Attrs *w = hlorun_ffi_attr(m, "window", XLA_FFI_AttrType_DICTIONARY);
    XLA_FFI_Array *sz = w ? hlorun_ffi_attr(w, "size", XLA_FFI_AttrType_ARRAY) : NULL;
    if (sz && sz->dtype == XLA_FFI_DataType_S64)
      for (size_t i = 0; i < sz->size && i < 4; i++) seen.window_size[seen.nwindow++] =
          ((int64_t *)sz->data)[i];
  }
  return NULL;
}

static HlfRegistry *reg_recorder(void) {
  HlfRegistry *r = hlf_registry_new();
  XLA_FFI_Handler_Bundle b = {NULL, NULL, NULL, recorder};
  ck_assert_int_eq(hlf_register_bundle(r, "rec", 3, &b, 0, HLF_SRC_PLUGIN, "test"), 0);
  return r;
}

START_TEST(test_tuples_tokens) {
  HlfRegistry *r = reg_recorder();
  int64_t d2[] = {2};
  HloShape el[2] = {arr(HLO_S32, 0, NULL), arr(HLO_F32, 1, d2)};
  HloInstr ins = cc("rec", HLO_API_TYPED_FFI, "", tup(2, el));
  float x[2];
  int32_t s;
  double z;
  int32_t os;
  float ox[2];
  /* operands: tuple (f32[2], s32[]) flattened, a token, an f64 scalar */
  HlfBuf a[4] = {buf(HLO_F32, x, 1, d2), buf(HLO_S32, &s, 0, NULL), buf(HLO_TOKEN, NULL, 0, NULL),
                 buf(HLO_F64, &z, 0, NULL)};
  HlfBuf b[2] = {buf(HLO_S32, &os, 0, NULL), buf(HLO_F32, ox, 1, d2)};
  ck_assert_ptr_null(run(r, &ins, a, 4, b, 2));
  ck_assert_uint_eq(seen.frame_size, 168);
  ck_assert_int_eq(seen.stage, XLA_FFI_ExecutionStage_EXECUTE);
  ck_assert_int_eq(seen.nargs, 4);
  ck_assert_int_eq(seen.nrets, 2);
  int want[6] = {XLA_FFI_DataType_F32, XLA_FFI_DataType_S32, XLA_FFI_DataType_TOKEN,
                 XLA_FFI_DataType_F64, XLA_FFI_DataType_S32, XLA_FFI_DataType_F32};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(seen.dtypes[i], want[i]);
  ck_assert_ptr_eq(seen.data[0], x);
  ck_assert_ptr_null(seen.data[2]);
  ck_assert_int_eq(seen.rank[2], 0);
  ck_assert_ptr_eq(seen.data[5], ox);
  ck_assert_int_eq(seen.nattrs, 0);
  ck_assert_uint_eq(seen.attrs_size, 48);
  hlf_registry_free(r);
}
END_TEST

START_TEST(test_frame_attrs) {
  HlfRegistry *r = reg_recorder();
  HloInstr ins = cc("rec", HLO_API_TYPED_FFI,
                    "{zeta = 1 : i32, Alpha = \"s\", alpha = {b = 1.5 : f32}, a = array<i64: 1, 2>}",
                    arr(HLO_F32, 0, NULL));
  float y;
  HlfBuf b = buf(HLO_F32, &y, 0, NULL);
  ck_assert_ptr_null(run(r, &ins, NULL, 0, &b, 1));
  ck_assert_int_eq(seen.nattrs, 4);
  /* sorted by bytes: uppercase before lowercase, a prefix first */
  ck_assert_str_eq(seen.names[0], "Alpha");
  ck_assert_str_eq(seen.names[1], "a");
  ck_assert_str_eq(seen.names[2], "alpha");
  ck_assert_str_eq(seen.names[3], "zeta");
  ck_assert_int_eq(seen.types[0], XLA_FFI_AttrType_STRING);
  ck_assert_int_eq(seen.types[1], XLA_FFI_AttrType_ARRAY);
  ck_assert_int_eq(seen.types[2], XLA_FFI_AttrType_DICTIONARY);
  ck_assert_int_eq(seen.types[3], XLA_FFI_AttrType_SCALAR);
  ck_assert(!seen.has_members);
  hlf_registry_free(r);
}
END_TEST

START_TEST(test_members_opt_in) {
  HlfRegistry *r = reg_recorder();
  HloWindowDim wd[2] = {{3, 1, 0, 0, 1, 1, false}, {5, 2, 1, 1, 1, 1, false}};
  HloInstr ins = cc("rec", HLO_API_TYPED_FFI, "{k = 1}", arr(HLO_F32, 0, NULL));
  ins.window = (HloWindow){2, wd, true};
  ins.dim_labels_text = "b01f_01io->b01f";
  float y;
  HlfBuf b = buf(HLO_F32, &y, 0, NULL);
  ck_assert_ptr_null(run(r, &ins, NULL, 0, &b, 1));
  ck_assert(!seen.has_members);             /* strict binders are never surprised */
  ck_assert_int_eq(hlf_set_members_opt_in(r, "rec", true), 0);
  HloInstr ins2 = ins;                      /* a new call site decodes again */
  ck_assert_ptr_null(run(r, &ins2, NULL, 0, &b, 1));
  ck_assert(seen.has_members);
  ck_assert_int_eq(seen.nattrs, 2);
  ck_assert_str_eq(seen.names[0], "hlorun.instruction");
  ck_assert_str_eq(seen.names[1], "k");
  ck_assert_int_eq(seen.nwindow, 2);
  ck_assert(seen.window_size[0] == 3 && seen.window_size[1] == 5);
  hlf_registry_free(r);
}
END_TEST

/* ---- API functions called directly ------------------------------------- */

START_TEST(test_api_functions) {
  HlfRegistry *r = hlf_registry_new();
  HlfSite site;
  memset(&site, 0, sizeof site);
  XLA_FFI_ExecutionContext ctx = {HLF_CTX_MAGIC, r, &site, XLA_FFI_ExecutionStage_EXECUTE, 3,
                                  NULL, NULL};   /* no call: memory untracked */
  const XLA_FFI_Api *api = hlf_api(3);
  /* Error_Create copies the message. */
  char msg[] = "temporary";
  XLA_FFI_Error_Create_Args ec = {XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL, msg,
                                  XLA_FFI_Error_Code_INTERNAL};
  XLA_FFI_Error *e = api->XLA_FFI_Error_Create(&ec);
  msg[0] = 'X';
  XLA_FFI_Error_GetMessage_Args gm = {XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE, NULL, e, NULL};
  api->XLA_FFI_Error_GetMessage(&gm);
  ck_assert_str_eq(gm.message, "temporary");
  XLA_FFI_Error_Destroy_Args ed = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
  api->XLA_FFI_Error_Destroy(&ed);
  /* Memory honours the alignment. */
  XLA_FFI_DeviceMemory_Allocate_Args ma = {XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE, NULL,
                                           &ctx, 100, 256, NULL};
  ck_assert_ptr_null(api->XLA_FFI_DeviceMemory_Allocate(&ma));
  ck_assert_uint_eq((uintptr_t)ma.data % 256, 0);
  XLA_FFI_DeviceMemory_Free_Args mf = {XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE, NULL, &ctx, 100,
                                       ma.data};
  ck_assert_ptr_null(api->XLA_FFI_DeviceMemory_Free(&mf));
  /* Types: same name, same id; user data by type id. */
  XLA_FFI_TypeId t1 = {0}, t2 = {0};
  XLA_FFI_Type_Register_Args tr = {XLA_FFI_Type_Register_Args_STRUCT_SIZE, NULL,
                                   {"test.user", 9}, &t1, NULL};
  ck_assert_ptr_null(api->XLA_FFI_Type_Register(&tr));
  tr.type_id = &t2;
  ck_assert_ptr_null(api->XLA_FFI_Type_Register(&tr));
  ck_assert(t1.type_id > 0 && t1.type_id == t2.type_id);
  ck_assert_int_eq(hlf_type_id("test.user"), t1.type_id);
  XLA_FFI_ExecutionContext_Get_Args cg = {XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE, NULL,
                                          &ctx, &t1, NULL};
  e = api->XLA_FFI_ExecutionContext_Get(&cg);
  ck_assert_ptr_nonnull(e);
  ck_assert_int_eq(e->code, XLA_FFI_Error_Code_NOT_FOUND);
  hlf_error_free(e);
  int payload = 5;
  ck_assert_int_eq(hlf_set_user_data(r, t1.type_id, &payload), 0);
  ck_assert_ptr_null(api->XLA_FFI_ExecutionContext_Get(&cg));
  ck_assert_ptr_eq(cg.data, &payload);
  /* No streams on the host; one device. */
  XLA_FFI_Stream_Get_Args sg = {XLA_FFI_Stream_Get_Args_STRUCT_SIZE, NULL, &ctx, NULL};
  e = api->XLA_FFI_Stream_Get(&sg);
  ck_assert_int_eq(e->code, XLA_FFI_Error_Code_UNIMPLEMENTED);
  hlf_error_free(e);
  XLA_FFI_DeviceOrdinal_Get_Args dg = {XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE, NULL, &ctx, 9};
  ck_assert_ptr_null(api->XLA_FFI_DeviceOrdinal_Get(&dg));
  ck_assert_int_eq(dg.device_ordinal, 0);
  /* A device thread of a multi-device run reports its device. */
  hlf_set_thread_device(5);
  ck_assert_ptr_null(api->XLA_FFI_DeviceOrdinal_Get(&dg));
  ck_assert_int_eq(dg.device_ordinal, 5);
  hlf_set_thread_device(0);
  /* Per-stage state (0.3): set in execute, read back; a second set fails. */
  int st = 1;
  XLA_FFI_State_Set_Args ss = {XLA_FFI_State_Set_Args_STRUCT_SIZE, NULL, &ctx,
                               XLA_FFI_ExecutionStage_EXECUTE, &t1, &st};
  ck_assert_ptr_null(api->XLA_FFI_State_Set(&ss));
  e = api->XLA_FFI_State_Set(&ss);
  ck_assert_int_eq(e->code, XLA_FFI_Error_Code_ALREADY_EXISTS);
  hlf_error_free(e);
  XLA_FFI_State_Get_Args sgt = {XLA_FFI_State_Get_Args_STRUCT_SIZE, NULL, &ctx,
                                XLA_FFI_ExecutionStage_EXECUTE, &t1, NULL};
  ck_assert_ptr_null(api->XLA_FFI_State_Get(&sgt));
  ck_assert_ptr_eq(sgt.state, &st);
  sgt.stage = XLA_FFI_ExecutionStage_PREPARE;
  e = api->XLA_FFI_State_Get(&sgt);
  ck_assert_int_eq(e->code, XLA_FFI_Error_Code_NOT_FOUND);
  hlf_error_free(e);
  /* Args that are too small, and a foreign ctx, are errors, not crashes. */
  XLA_FFI_RunId_Get_Args rg = {8, NULL, &ctx, 0};
  e = api->XLA_FFI_RunId_Get(&rg);
  ck_assert_int_eq(e->code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
  hlf_error_free(e);
  int junk[16] = {0};
  rg = (XLA_FFI_RunId_Get_Args){40, NULL, (XLA_FFI_ExecutionContext *)junk, 0};
  e = api->XLA_FFI_RunId_Get(&rg);
  ck_assert_int_eq(e->code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
  hlf_error_free(e);
  /* Handler_Register outside a plugin's registration function. */
  XLA_FFI_Handler_Register_Args hr;
  memset(&hr, 0, sizeof hr);
  hr.struct_size = XLA_FFI_Handler_Register_Args_STRUCT_SIZE;
  e = api->XLA_FFI_Handler_Register(&hr);
  ck_assert_int_eq(e->code, XLA_FFI_Error_Code_FAILED_PRECONDITION);
  hlf_error_free(e);
  site.states[XLA_FFI_ExecutionStage_EXECUTE] = (HlfState){0};   /* not ours to delete */
  hlf_registry_free(r);
}
END_TEST

/* ---- Module-level: explain, positioned errors ---------------------------- */

static const char *src =
    "HloModule m\n"
    "ENTRY e {\n"
    "  p = f32[2] parameter(0)\n"
    "  c = f32[2] custom-call(p), custom_call_target=\"rec\", api_version=API_VERSION_TYPED_FFI, "
    "backend_config=\"{s = \\\"a\\\\\\\"b\\\", x = 1 : i77}\"\n"
    "}\n";

START_TEST(test_module_errors_and_explain) {
  HlfRegistry *r = reg_recorder();
  int64_t d2[] = {2};
  HloModule m;
  memset(&m, 0, sizeof m);
  m.source = src;
  m.source_len = strlen(src);
  m.filename = "t.hlo";
  m.name = "m";
  HloInstr p;
  memset(&p, 0, sizeof p);
  p.op = HLO_OP_PARAMETER;
  p.name = "p";
  p.shape = arr(HLO_F32, 1, d2);
  /* The quoted config as the parser decodes it: {s = "a\"b", x = 1 : i77} */
  HloInstr c = cc("rec", HLO_API_TYPED_FFI, "{s = \"a\\\"b\", x = 1 : i77}", arr(HLO_F32, 1, d2));
  HloInstr *ops[1] = {&p};
  c.ops = ops;
  c.nops = 1;
  c.line = 4;
  c.off = (uint32_t)(strstr(src, "  c =") - src + 2);
  c.backend_config_quoted = true;
  c.backend_config_off = (uint32_t)(strstr(src, "backend_config=\"") - src + 16);
  HloInstr *instrs[2] = {&p, &c};
  HloComputation comp;
  memset(&comp, 0, sizeof comp);
  comp.name = "e";
  comp.ninstrs = 2;
  comp.instrs = instrs;
  HloComputation *comps[1] = {&comp};
  m.comps = comps;
  m.ncomps = 1;
  HlcDiags d = {0};
  ck_assert_int_eq(hlf_check_module(r, &m, &d), -1);
  ck_assert_int_eq(d.nerrors, 1);
  /* "i77" starts at source column: find it in the line, escapes included. */
  const char *line4 = strstr(src, "  c =");
  int col = (int)(strstr(line4, "i77") - line4) + 1;
  ck_assert_int_eq(d.v[0].line, 4);
  ck_assert_int_eq(d.v[0].col, col);
  ck_assert(strstr(d.v[0].message, "unsupported type 'i77'"));
  hlc_diags_clear(&d);
  char *text = hlf_explain(r, &m, &d);
  ck_assert_ptr_nonnull(text);
  ck_assert(strstr(text, "custom-call %cc (line 4)\n  target: \"rec\"\n"
                         "  api_version: API_VERSION_TYPED_FFI (4)\n"
                         "  operands: f32[2]\n  result: f32[2]\n"));
  ck_assert(strstr(text, "attributes: error at 4:"));
  ck_assert(strstr(text, "binding: test, typed FFI handler registered by a plugin"));
  free(text);
  hlc_diags_clear(&d);
  /* A good config explains its attributes with types. */
  c.backend_config = "{s = \"a\\\"b\", x = 1 : i32, v = array<i64: 1, 2>}";
  c.backend_config_len = strlen(c.backend_config);
  c.custom_call_target = "unbound_one";
  text = hlf_explain(r, &m, &d);
  ck_assert(strstr(text, "  attributes: dictionary (3 entries)\n"
                         "    s: string \"a\\\"b\"\n"
                         "    v: array<i64: 1, 2>\n"
                         "    x: i32 1\n"));
  ck_assert(strstr(text, "binding: NOT BOUND (bind with --custom-call unbound_one=LIB.so[:SYMBOL]"));
  free(text);
  /* A splat of 27 million elements shows its first 32 (fuzz_attrs: writing
   * them all took longer than the fuzzer's 20 s timeout); unsigned types
   * keep MLIR's name (ui16, once printed "uui16"). */
  c.backend_config = "{t = dense<[[7]]> : tensor<27222333xui16>}";
  c.backend_config_len = strlen(c.backend_config);
  text = hlf_explain(r, &m, &d);
  ck_assert(strstr(text, "    t: array<ui16: 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, "
                         "7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, ... (27222333 elements)>\n"));
  free(text);
  ck_assert_int_eq(d.nerrors, 0);
  hlf_registry_free(r);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("ffi");
  TCase *t = tcase_create("host");
  tcase_set_timeout(t, 30);
  tcase_add_test(t, test_layouts);
  tcase_add_test(t, test_builtin_identity);
  tcase_add_test(t, test_builtin_topk);
  tcase_add_test(t, test_unbound);
  tcase_add_test(t, test_bind_errors);
  tcase_add_test(t, test_register_at_load);
  tcase_add_test(t, test_register_type_either_layout);
  tcase_add_test(t, test_handler_error);
  tcase_add_test(t, test_version_rejected);
  tcase_add_test(t, test_v01_15slot);
  tcase_add_test(t, test_v01_18slot_async);
  tcase_add_test(t, test_v02);
  tcase_add_test(t, test_plugin_stages);
  tcase_add_test(t, test_async_error);
  tcase_add_test(t, test_legacy);
  tcase_add_test(t, test_tuples_tokens);
  tcase_add_test(t, test_frame_attrs);
  tcase_add_test(t, test_members_opt_in);
  tcase_add_test(t, test_api_functions);
  tcase_add_test(t, test_module_errors_and_explain);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tl_main(suite()); }

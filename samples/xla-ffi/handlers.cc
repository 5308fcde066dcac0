// handlers.cc: test handlers written with XLA's C++ FFI API (xla/ffi/api/ffi.h), one
// per feature. Builds against the 0.1 or the 0.3 headers (include path); see run.sh.
#include "xla/ffi/api/ffi.h"

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

namespace ffi = xla::ffi;

// ---- 1. scalar attributes, bound in non-sorted order -----------------------
static ffi::Error AffineImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y,
                             int64_t zeta, float alpha) {
  for (size_t i = 0; i < x.element_count(); i++)
    y->typed_data()[i] = alpha * x.typed_data()[i] + static_cast<float>(zeta);
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_affine, AffineImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("zeta")
                                  .Attr<float>("alpha"));

// ---- 2. every attribute kind ------------------------------------------------
static ffi::Error AttrsImpl(ffi::ResultBuffer<ffi::F64> out, ffi::Span<const int64_t> dims,
                            std::string_view name, ffi::Dictionary cfg, bool flag, int32_t n,
                            double d, ffi::Span<const float> fs) {
  double* o = out->typed_data();
  if (out->element_count() != 10) return ffi::Error::InvalidArgument("want f64[10]");
  double s = 0;
  for (int64_t v : dims) s += static_cast<double>(v);
  o[0] = s;
  o[1] = static_cast<double>(dims.size());
  o[2] = static_cast<double>(name.size());
  o[3] = name.empty() ? -1 : static_cast<unsigned char>(name[0]);
  auto k = cfg.get<int64_t>("k");
  if (!k) return ffi::Error::InvalidArgument("cfg.k: " + k.error().message());
  auto str = cfg.get<std::string_view>("s");
  if (!str) return ffi::Error::InvalidArgument("cfg.s: " + str.error().message());
  o[4] = static_cast<double>(*k);
  o[5] = static_cast<double>(str->size());
  o[6] = flag ? 1 : 0;
  o[7] = n;
  o[8] = d;
  double fsum = 0;
  for (float v : fs) fsum += v;
  o[9] = fsum;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_attrs, AttrsImpl,
                              ffi::Ffi::Bind()
                                  .Ret<ffi::Buffer<ffi::F64>>()
                                  .Attr<ffi::Span<const int64_t>>("dims")
                                  .Attr<std::string_view>("name")
                                  .Attr<ffi::Dictionary>("cfg")
                                  .Attr<bool>("flag")
                                  .Attr<int32_t>("n")
                                  .Attr<double>("d")
                                  .Attr<ffi::Span<const float>>("fs"));

// ---- 3. the whole dictionary --------------------------------------------------
static ffi::Error DictImpl(ffi::ResultBuffer<ffi::F64> out, ffi::Dictionary attrs) {
  double* o = out->typed_data();
  o[0] = static_cast<double>(attrs.size());
  auto a = attrs.get<int64_t>("a");
  auto b = attrs.get<float>("b");
  if (!a || !b) return ffi::Error::InvalidArgument("dictionary lacks a:i64 or b:f32");
  o[1] = static_cast<double>(*a);
  o[2] = *b;
  o[3] = attrs.contains("zz") ? 1 : 0;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_dict, DictImpl,
                              ffi::Ffi::Bind().Ret<ffi::Buffer<ffi::F64>>().Attrs());

// ---- 4. failing handler -------------------------------------------------------
static ffi::Error FailImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  for (size_t i = 0; i < x.element_count(); i++) {
    if (x.typed_data()[i] < 0)
      return ffi::Error::InvalidArgument("xf_fail: element " + std::to_string(i) +
                                         " is negative");
    y->typed_data()[i] = std::sqrt(x.typed_data()[i]);
  }
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_fail, FailImpl,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());

// ---- 5. asynchronous (Future) -------------------------------------------------
static ffi::Future AsyncImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x,
                             ffi::ResultBuffer<ffi::F32> y, bool fail) {
  ffi::Promise promise;
  ffi::Future future(promise);
  const float* in = x.typed_data();
  float* out = y->typed_data();
  size_t n = x.element_count();
  auto p = std::make_shared<ffi::Promise>(std::move(promise));
  pool.Schedule([p, in, out, n, fail]() {
    if (fail) {
      p->SetError(ffi::Error(ffi::ErrorCode::kInternal, "xf_async: failed on a worker"));
      return;
    }
    for (size_t i = 0; i < n; i++) out[i] = in[i] * in[i];
    p->SetAvailable();
  });
  return future;
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_async, AsyncImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<bool>("fail"));

// ---- 6. thread pool fan-out, waited for inside the handler ----------------------
static ffi::Error PoolImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x,
                           ffi::ResultBuffer<ffi::F32> y) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  size_t n = x.element_count();
  std::mutex mu;
  std::condition_variable cv;
  size_t done = 0;
  for (size_t i = 0; i < n; i++) {
    pool.Schedule([&, i]() {
      out[i] = in[i] + 1.0f;
      std::lock_guard<std::mutex> l(mu);
      if (++done == n) cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> l(mu);
  cv.wait(l, [&] { return done == n; });
#if XLA_FFI_API_MINOR >= 2
  if (pool.num_threads() < 1) return ffi::Error::Internal("num_threads < 1");
#endif
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_pool, PoolImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// ---- 7. scratch memory -----------------------------------------------------------
static ffi::Error ScratchImpl(ffi::ScratchAllocator scratch, ffi::Buffer<ffi::F32> x,
                              ffi::ResultBuffer<ffi::F32> y) {
  size_t n = x.element_count();
  auto mem = scratch.Allocate(n * sizeof(float) + 1, 64);
  if (!mem) return ffi::Error::Internal("scratch allocation failed");
  if (reinterpret_cast<uintptr_t>(*mem) % 64) return ffi::Error::Internal("misaligned");
  float* tmp = static_cast<float*>(*mem);
  for (size_t i = 0; i < n; i++) tmp[i] = x.typed_data()[n - 1 - i];
  std::memcpy(y->typed_data(), tmp, n * sizeof(float));
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_scratch, ScratchImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ScratchAllocator>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// ---- 8. remaining args / rets: ret i = arg i (bytes) ---------------------------------
static ffi::Error RemainingImpl(ffi::AnyBuffer first, ffi::RemainingArgs args,
                                ffi::RemainingRets rets) {
  if (args.size() != rets.size())
    return ffi::Error::InvalidArgument("remaining: " + std::to_string(args.size()) + " args but " +
                                       std::to_string(rets.size()) + " rets");
  for (size_t i = 0; i < args.size(); i++) {
    auto a = args.get<ffi::AnyBuffer>(i);
    auto r = rets.get<ffi::AnyBuffer>(i);
    if (!a || !r) return ffi::Error::Internal("remaining: decode failed");
    if (a->size_bytes() != (*r)->size_bytes()) return ffi::Error::InvalidArgument("size mismatch");
    std::memcpy((*r)->untyped_data(), a->untyped_data(), a->size_bytes());
  }
  (void)first;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_remaining, RemainingImpl,
                              ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().RemainingArgs().RemainingRets());

// ---- 9. tuple result -------------------------------------------------------------
static ffi::Error MinMaxImpl(ffi::BufferR1<ffi::F32> x, ffi::ResultBufferR0<ffi::F32> mn,
                             ffi::ResultBufferR0<ffi::F32> mx, ffi::ResultBufferR0<ffi::S32> at) {
  const float* v = x.typed_data();
  size_t n = x.element_count();
  if (n == 0) return ffi::Error::InvalidArgument("empty");
  size_t lo = 0, hi = 0;
  for (size_t i = 1; i < n; i++) {
    if (v[i] < v[lo]) lo = i;
    if (v[i] > v[hi]) hi = i;
  }
  *mn->typed_data() = v[lo];
  *mx->typed_data() = v[hi];
  *at->typed_data() = static_cast<int32_t>(hi);
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_minmax, MinMaxImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::BufferR1<ffi::F32>>()
                                  .Ret<ffi::BufferR0<ffi::F32>>()
                                  .Ret<ffi::BufferR0<ffi::F32>>()
                                  .Ret<ffi::BufferR0<ffi::S32>>());

// ---- 10. tokens ----------------------------------------------------------------------
static ffi::Error TokenImpl(ffi::Token tin, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y,
                            ffi::Result<ffi::Token> tout) {
  for (size_t i = 0; i < x.element_count(); i++) y->typed_data()[i] = -x.typed_data()[i];
  if (tin.element_count() != 1 || tin.size_bytes() != 0) return ffi::Error::Internal("token shape");
  (void)tout;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_token, TokenImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Token>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Token>());

// ---- 11. narrow / complex / pred element types -----------------------------------------
static double Bf16(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
static double F16(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}
static ffi::Error TypesImpl(ffi::Buffer<ffi::BF16> a, ffi::Buffer<ffi::F16> b, ffi::Buffer<ffi::C64> c,
                            ffi::Buffer<ffi::PRED> p, ffi::ResultBuffer<ffi::F64> out) {
  double* o = out->typed_data();
  o[0] = o[1] = o[2] = o[3] = 0;
  for (size_t i = 0; i < a.element_count(); i++) o[0] += Bf16(a.typed_data()[i]);
  for (size_t i = 0; i < b.element_count(); i++) o[1] += F16(b.typed_data()[i]);
  for (size_t i = 0; i < c.element_count(); i++) o[2] += c.typed_data()[i].real() * 10 + c.typed_data()[i].imag();
  for (size_t i = 0; i < p.element_count(); i++) o[3] += p.typed_data()[i] ? 1 : 0;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_types, TypesImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::BF16>>()
                                  .Arg<ffi::Buffer<ffi::F16>>()
                                  .Arg<ffi::Buffer<ffi::C64>>()
                                  .Arg<ffi::Buffer<ffi::PRED>>()
                                  .Ret<ffi::Buffer<ffi::F64>>());

#if XLA_FFI_API_MINOR >= 2
// ---- 12. s4 (one element per byte) and run information (0.2+) --------------------------
static ffi::Error S4Impl(ffi::AnyBuffer x, ffi::ResultBuffer<ffi::S32> y) {
  if (x.element_type() != ffi::S4) return ffi::Error::InvalidArgument("want s4");
  const int8_t* v = static_cast<const int8_t*>(x.untyped_data());
  for (size_t i = 0; i < x.element_count(); i++) y->typed_data()[i] = v[i] * 100;
  if (x.size_bytes() != x.element_count()) return ffi::Error::Internal("s4 byte width");
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_s4, S4Impl,
                              ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Ret<ffi::Buffer<ffi::S32>>());

static ffi::Error RunInfoImpl(ffi::RunId run, int32_t ordinal, ffi::ResultBufferR0<ffi::S64> out) {
  *out->typed_data() = 1000 + run.run_id * 10 + ordinal;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_runinfo, RunInfoImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::RunId>()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Ret<ffi::BufferR0<ffi::S64>>());
#endif

// ---- 13. stateful handler (instantiate + execute), registered by a plugin function -------
struct Counter {
  static ffi::TypeId id;
  int64_t base = 0;
  int64_t calls = 0;
};
ffi::TypeId Counter::id = {0};

static ffi::ErrorOr<std::unique_ptr<Counter>> CounterInit(int64_t base) {
  auto c = std::make_unique<Counter>();
  c->base = base;
  return c;
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_counter_instantiate, CounterInit,
                              ffi::Ffi::BindInstantiate().Attr<int64_t>("base"));

static ffi::Error CounterRun(Counter* c, ffi::ResultBufferR0<ffi::S64> out, int64_t base) {
  if (c->base != base) return ffi::Error::Internal("state lost its base");
  *out->typed_data() = c->base + c->calls++;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(xf_counter_execute, CounterRun,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::State<Counter>>()
                                  .Ret<ffi::BufferR0<ffi::S64>>()
                                  .Attr<int64_t>("base"));

extern "C" XLA_FFI_Error* xf_plugin_init(const XLA_FFI_Api* api) {
#if XLA_FFI_API_MINOR >= 2
  if (XLA_FFI_Error* e = ffi::Ffi::RegisterTypeId(api, "xf.Counter", &Counter::id,
                                                   ffi::MakeTypeInfo<Counter>()))
    return e;
#else
  if (XLA_FFI_Error* e = ffi::internal::RegisterType(api, "xf.Counter", &Counter::id)) return e;
#endif
  return ffi::Ffi::RegisterStaticHandler(
      api, "xf_counter", "Host",
      XLA_FFI_Handler_Bundle{xf_counter_instantiate, nullptr, nullptr, xf_counter_execute});
}

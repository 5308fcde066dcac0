// static_reg.cc: handlers and types that register themselves while the library
// loads (XLA_FFI_REGISTER_HANDLER/TYPE with xla::ffi::GetXlaFfiApi(); 0.2+ headers).
#include "xla/ffi/api/ffi.h"
#include <memory>
namespace ffi = xla::ffi;

static ffi::Error Twice(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  for (size_t i = 0; i < x.element_count(); i++) y->typed_data()[i] = 2 * x.typed_data()[i];
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER(kTwice, Twice, ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());
XLA_FFI_REGISTER_HANDLER(ffi::GetXlaFfiApi(), "xs_twice", "Host", kTwice);

// A stateful bundle with prepare/initialize states (0.3 stage-aware State).
struct Base { static ffi::TypeId id; float v; };
ffi::TypeId Base::id = {0};
struct Prep { static ffi::TypeId id; float v; };
ffi::TypeId Prep::id = {0};
XLA_FFI_REGISTER_TYPE(ffi::GetXlaFfiApi(), "xs.Base", &Base::id, ffi::MakeTypeInfo<Base>());
XLA_FFI_REGISTER_TYPE(ffi::GetXlaFfiApi(), "xs.Prep", &Prep::id, ffi::MakeTypeInfo<Prep>());

static ffi::ErrorOr<std::unique_ptr<Base>> Inst(float b) { return std::unique_ptr<Base>(new Base{b}); }
static ffi::ErrorOr<std::unique_ptr<Prep>> Prepare(Base* base, float b) {
  return std::unique_ptr<Prep>(new Prep{base->v * 10 + b});
}
static ffi::Error Exec(Base* base, Prep* prep, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y, float b) {
  for (size_t i = 0; i < x.element_count(); i++) y->typed_data()[i] = x.typed_data()[i] + base->v + prep->v;
  (void)b;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER(kInst, Inst, ffi::Ffi::BindInstantiate().Attr<float>("b"));
XLA_FFI_DEFINE_HANDLER(kPrep, Prepare, ffi::Ffi::BindPrepare().Ctx<ffi::State<Base>>().Attr<float>("b"));
XLA_FFI_DEFINE_HANDLER(kExec, Exec,
    ffi::Ffi::Bind().Ctx<ffi::State<Base>>().Ctx<ffi::Prepared<Prep>>()
        .Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>().Attr<float>("b"));
XLA_FFI_REGISTER_HANDLER(ffi::GetXlaFfiApi(), "xs_staged", "Host",
                         (XLA_FFI_Handler_Bundle{kInst, kPrep, nullptr, kExec}));
// A CUDA registration in the same library must be ignored on the host.
XLA_FFI_REGISTER_HANDLER(ffi::GetXlaFfiApi(), "xs_twice", "CUDA", kTwice);

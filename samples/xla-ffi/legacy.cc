// legacy.cc: legacy custom calls (api_version 1, 2, 3), with the status functions
// declared as XLA's xla/service/custom_call_status.h declares them (no XLA header needed).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" {
typedef struct XlaCustomCallStatus_ XlaCustomCallStatus;
void XlaCustomCallStatusSetSuccess(XlaCustomCallStatus* status);
void XlaCustomCallStatusSetFailure(XlaCustomCallStatus* status, const char* message,
                                   size_t message_len);
}

// v1: out = in0 + in1 (f32[4]); a tuple operand contributes one entry per leaf.
extern "C" void lg_add(void* out, const void** in) {
  const float* a = static_cast<const float*>(in[0]);
  const float* b = static_cast<const float*>(in[1]);
  float* o = static_cast<float*>(out);
  for (int i = 0; i < 4; i++) o[i] = a[i] + b[i];
}

// v2: out = 2*x, fails on a negative element.
extern "C" void lg_checked(void* out, const void** in, XlaCustomCallStatus* status) {
  const float* x = static_cast<const float*>(in[0]);
  float* o = static_cast<float*>(out);
  for (int i = 0; i < 4; i++) {
    if (x[i] < 0) {
      std::string m = "lg_checked: negative input at " + std::to_string(i) + "; trailing junk";
      XlaCustomCallStatusSetFailure(status, m.data(), m.size() - 14);
      return;
    }
    o[i] = 2 * x[i];
  }
  XlaCustomCallStatusSetSuccess(status);
}

// v3: tuple result (f32[4] = x * k, s32[] = opaque length); k parsed from the opaque.
extern "C" void lg_opaque(void* out, const void** in, const char* opaque, size_t len,
                          XlaCustomCallStatus* status) {
  if (len == 0) {
    static const char msg[] = "lg_opaque: empty opaque";
    XlaCustomCallStatusSetFailure(status, msg, sizeof msg - 1);
    return;
  }
  std::string s(opaque, len);
  float k = std::strtof(s.c_str() + s.find_first_of("-0123456789"), nullptr);
  void** outs = static_cast<void**>(out);
  const float* x = static_cast<const float*>(in[0]);
  float* y = static_cast<float*>(outs[0]);
  for (int i = 0; i < 4; i++) y[i] = x[i] * k;
  *static_cast<int32_t*>(outs[1]) = static_cast<int32_t>(len);
}

/* fuzz_run.c: libFuzzer target for the whole pipeline through the public
 * API: parse, verify, compile and run small modules under tight resource
 * limits (16 MiB of values, 1000 iterations per while loop, one second per
 * run), with pseudo-random inputs. Every input must give a result or an
 * error; never a crash, a hang or unbounded memory.
 * Not here: the parser's round trip (fuzz_parse.c). */
#include "hlorun.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static HloCtx *ctx;

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  if (size > 1 << 15) return 0;
  if (!ctx) {
    HloCtxOptions co = {.struct_size = sizeof co};
    co.threads = 1;
    co.max_memory = 16u << 20;
    if (hlo_ctx_new(&co, &ctx) != HLO_OK) abort();
  }
  hlo_ctx_clear_diagnostics(ctx);
  HloModule *m = NULL;
  if (hlo_module_parse(ctx, (const char *)data, size, "fuzz.hlo", &m) != HLO_OK) return 0;
  HloExecutable *e = NULL;
  HloBuffer *in[8] = {0}, *res = NULL;
  int np = hlo_module_num_params(m);
  if (np > 8 || hlo_module_verify(ctx, m) != HLO_OK) goto out;
  HloRunOptions ro = {.struct_size = sizeof ro};
  ro.random_constants = 1;
  ro.seed = 1;
  ro.max_iterations = 1000;
  ro.timeout = 1.0;
  if (hlo_compile(ctx, m, &ro, &e) != HLO_OK) goto out;
  for (int i = 0; i < np; i++)
    if (hlo_random_param(ctx, m, i, 7, &in[i]) != HLO_OK) goto out;
  if (hlo_execute(e, in, np, &res) == HLO_OK) {
    char *text = NULL;
    size_t len;
    if (hlo_buffer_to_literal(ctx, res, &text, &len) == HLO_OK) hlo_free(text);
  }
out:
  hlo_buffer_free(res);
  for (int i = 0; i < 8; i++) hlo_buffer_free(in[i]);
  hlo_executable_free(e);
  hlo_module_free(m);
  return 0;
}

/* check_embed.c: libhlorun in a program that has its own SIGBUS and SIGSEGV
 * handlers (as Python and JVMs do). Loading a large input file that is cut
 * short is an error with HLO_IO_ERROR (the CLI's exit 2) naming the file,
 * and the program's handlers are the ones installed afterwards: the library
 * installs no signal handler of its own, at load or when it reads a file.
 * Uses only the public API (linked with libhlorun.la). Exits 0 when every
 * check holds, 1 otherwise, naming the check. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hlorun.h"

/* AddressSanitizer's runtime installs SIGSEGV and SIGBUS handlers of its own
 * before main (CI's sanitizer build): told not to, through its documented
 * default-options hook, the check below is still about libhlorun alone. */
#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "handle_segv=0:handle_sigbus=0"; }
#endif

static int fails;
#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); fails++; } } while (0)

static void on_bus(int sig) { (void)sig; _exit(3); }
static void on_segv(int sig, siginfo_t *si, void *uc) { (void)sig; (void)si; (void)uc; _exit(4); }

/* The handler now installed for sig. */
static struct sigaction now(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigaction(sig, NULL, &sa);
  return sa;
}

int main(void) {
  /* Loading the library ran its constructors: nothing was installed. */
  CHECK(now(SIGBUS).sa_handler == SIG_DFL, "SIGBUS is not SIG_DFL after loading libhlorun");
  CHECK(now(SIGSEGV).sa_handler == SIG_DFL, "SIGSEGV is not SIG_DFL after loading libhlorun");
  struct sigaction bus, segv;
  memset(&bus, 0, sizeof bus);
  bus.sa_handler = on_bus;
  sigemptyset(&bus.sa_mask);
  memset(&segv, 0, sizeof segv);
  segv.sa_sigaction = on_segv;
  segv.sa_flags = SA_SIGINFO;
  sigemptyset(&segv.sa_mask);
  if (sigaction(SIGBUS, &bus, NULL) != 0 || sigaction(SIGSEGV, &segv, NULL) != 0) return 1;

  /* A .npy header for f32[1048576] (4 MiB, read on demand) with only 2 MiB
   * of its data: cut short, as by a copy that did not finish. */
  char dir[] = "/tmp/hlorun_embed_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char npy_path[64], hlo_path[64];
  snprintf(npy_path, sizeof npy_path, "%s/cut.npy", dir);
  snprintf(hlo_path, sizeof hlo_path, "%s/m.hlo", dir);
  char hdr[128];
  int len = snprintf(hdr + 10, sizeof hdr - 10,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (1048576,), }");
  memset(hdr + 10 + len, ' ', sizeof hdr - 11 - (size_t)len);
  hdr[127] = '\n';
  memcpy(hdr, "\x93NUMPY\x01\x00\x76\x00", 10);
  FILE *f = fopen(npy_path, "wb");
  if (!f) return 1;
  fwrite(hdr, 1, sizeof hdr, f);
  static float half[1 << 19];
  for (int i = 0; i < 1 << 19; i++) half[i] = (float)i;
  fwrite(half, sizeof(float), 1 << 19, f);
  fclose(f);
  const char *text = "HloModule m\nENTRY main {\n  x = f32[1048576] parameter(0)\n"
                     "  ROOT n = f32[1048576] negate(x)\n}\n";
  f = fopen(hlo_path, "w");
  if (!f) return 1;
  fputs(text, f);
  fclose(f);

  HloCtx *ctx = NULL;
  HloModule *m = NULL;
  HloBuffer *b = NULL;
  CHECK(hlo_ctx_new(NULL, &ctx) == HLO_OK, "hlo_ctx_new");
  CHECK(hlo_module_load(ctx, hlo_path, &m) == HLO_OK, "hlo_module_load: %s", hlo_ctx_diagnostics(ctx));
  HloStatus st = m ? hlo_load_param(ctx, m, 0, npy_path, &b) : HLO_ERROR;
  CHECK(st == HLO_IO_ERROR, "loading the cut-short file gave status %d, not HLO_IO_ERROR", (int)st);
  CHECK(b == NULL, "a buffer from the cut-short file");
  char want[256];
  snprintf(want, sizeof want, "input 0 (%s, parameter x): truncated data: 2097152 bytes, "
           "4194304 expected", npy_path);
  CHECK(strstr(hlo_ctx_diagnostics(ctx), want) != NULL, "diagnostics lack '%s':\n%s", want,
        hlo_ctx_diagnostics(ctx));

  /* The program's handlers are still its own. */
  CHECK(now(SIGBUS).sa_handler == on_bus, "SIGBUS's handler was replaced");
  struct sigaction s = now(SIGSEGV);
  CHECK((s.sa_flags & SA_SIGINFO) && s.sa_sigaction == on_segv, "SIGSEGV's handler was replaced");

  hlo_buffer_free(b);
  hlo_module_free(m);
  hlo_ctx_free(ctx);
  unlink(npy_path);
  unlink(hlo_path);
  rmdir(dir);
  return fails ? 1 : 0;
}

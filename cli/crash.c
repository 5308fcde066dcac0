/* crash.c: what the hlorun command says when the process gets a fatal
 * signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) while a custom-call
 * handler runs in it: the target, the instruction and its line, the signal,
 * and how to contain such a handler (--isolate-custom-calls); exit 2.
 * Any other fatal signal, or one in a forked worker (isolate.c, where the
 * parent reports), goes on to the action that was there before (the
 * default, or a sanitizer's report). Only async-signal-safe calls here. */
#include "cli/cli.h"
#include <signal.h>
#include <string.h>
#include <unistd.h>

static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
enum { NFATAL = sizeof fatal / sizeof fatal[0] };
static struct sigaction previous[NFATAL];
static pid_t owner;
static char altstack[64 * 1024];   /* a handler that overflows its stack */

static void put(const char *s) {
  size_t n = strlen(s);
  while (n > 0) {
    ssize_t w = write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

static const char *signal_name(int sig) {
  switch (sig) {
  case SIGSEGV: return "11 (Segmentation fault)";
  case SIGBUS: return "7 (Bus error)";
  case SIGILL: return "4 (Illegal instruction)";
  case SIGFPE: return "8 (Floating-point exception)";
  default: return "6 (Aborted)";
  }
}

static void on_fatal(int sig, siginfo_t *info, void *context) {
  (void)info;
  (void)context;
  const char *running = hlo_custom_call_in_progress();
  if (running && getpid() == owner) {
    put("hlorun: error: the handler of ");
    put(running);
    put(" crashed with signal ");
    put(signal_name(sig));
    put("; run with --isolate-custom-calls to contain it and save its inputs for replay\n");
    _exit(EXIT_ERROR);
  }
  /* Not ours to report: put the previous action back and let the signal
   * take it (a fault re-faults on return; abort() raises again). */
  for (int i = 0; i < NFATAL; i++)
    if (fatal[i] == sig) sigaction(sig, &previous[i], NULL);
}

void crash_reports_install(void) {
  owner = getpid();
  stack_t old;   /* keep an alternate stack a sanitizer already set up */
  if (sigaltstack(NULL, &old) == 0 && (old.ss_flags & SS_DISABLE)) {
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    sigaltstack(&ss, NULL);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fatal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < NFATAL; i++) sigaction(fatal[i], &sa, &previous[i]);
}

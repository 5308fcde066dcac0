/* cli.h: declarations shared by the files of the hlorun command (cli/).
 *
 * hlorun.c parses options and runs one module; debug.c observes a run
 * (--trace, --check-nan, --stats, --dump-custom-calls, progress); casedir.c
 * reads the layout of a golden case directory; suite.c runs directories of
 * cases in parallel child processes (--suite, --record, --junit). Everything
 * goes through the public API (hlorun.h). */
#ifndef HLORUN_CLI_CLI_H
#define HLORUN_CLI_CLI_H
#include "hlorun.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum { EXIT_OK = 0, EXIT_MISMATCH = 1, EXIT_ERROR = 2 };

extern const char *prog;     /* "hlorun" */

typedef struct Binding { const char *target, *lib, *symbol; } Binding;

typedef struct Opts {
  const char *module;
  const char **inputs;
  int ninputs;
  const char *output;
  const char *expect;
  double rtol, atol;          /* < 0: per-type defaults */
  bool random;
  uint64_t seed;
  long bench;                 /* 0 = no benchmark */
  int threads;
  uint64_t max_memory;
  bool print, explain;
  bool strict;               /* --strict: --print stops at verifier errors */
  Binding *bind;
  int nbind;
  const char **plugins;       /* LIB.so[:FUNCTION] as given */
  int nplugins;
  const char **members;       /* --ffi-members targets; "" = every target */
  int nmembers;
  bool all_stages;            /* --ffi-all-stages */
  /* Options a suite passes on to every case, as written ("--plugin=x.so"). */
  char **pass;
  int npass;

  /* Reliability: limits and crash-proof custom calls. */
  int64_t max_iterations;     /* per while loop; 0 = unlimited */
  bool isolate;               /* --isolate-custom-calls */
  double cc_timeout;          /* seconds per isolated custom call; 0 = default */
  const char *crash_dir;      /* where isolated crashes save inputs */

  /* Debugging */
  bool trace;
  const char *trace_filter;   /* NULL = everything */
  bool check_nan;
  bool stats;
  const char *dump_dir;       /* --dump-custom-calls */
  const char *replay;         /* --replay DIR */
  const char *only;           /* --only-instruction NAME */
  int progress;               /* -1 auto (terminal), 0 off, 1 on */

  /* Suites */
  bool suite;
  int jobs;                   /* 0 = number of cores */
  bool record;
  const char *junit;
  double timeout;             /* seconds per run (suites: per case, default 600); 0 = none */
  bool verbose;
} Opts;

/* ---- Case directories (casedir.c) ---- */

typedef struct Case {
  char *dir;                  /* as found */
  char *module;               /* DIR/module.hlo or DIR/case.hlo */
  char **inputs;              /* DIR/in0.{npy,npz,txt}, in1..., consecutive */
  int ninputs;
  char *expected;             /* DIR/expected.{npy,npz,txt}, or NULL */
  double rtol, atol;          /* < 0: not set by the case */
  char **args;                /* lines of DIR/args: extra options */
  int nargs;
} Case;

/* Is dir a case (holds module.hlo or case.hlo)? */
bool case_is_dir(const char *dir);
/* Read a case's layout. 0, or -1 after printing why. */
int case_load(const char *dir, Case *c);
void case_free(Case *c);
/* Cases under each of dirs (a case itself, or folders searched
 * recursively), sorted by path. *n set; NULL with *n = 0 if none (or on
 * error, after printing why). */
Case *case_find_all(char *const *dirs, int ndirs, int *n);

/* ---- Observing a run (debug.c) ---- */

typedef struct Debug Debug;
/* NULL when no debugging option asks for observation (and no progress). */
Debug *debug_new(const Opts *o, HloCtx *ctx, const HloModule *m, bool progress);
/* Set the observer on exe (once per executable). */
HloStatus debug_attach(Debug *d, HloExecutable *exe);
/* After a run (rc from hlo_execute): print statistics, clear the progress
 * line. Returns the exit status to use when the observer stopped the run. */
void debug_after_run(Debug *d, HloExecutable *exe, double wall_ms);
/* The observer stopped the run (--check-nan found something). */
bool debug_stopped(const Debug *d);
void debug_free(Debug *d);

/* ---- Suites (suite.c) ---- */

/* Run every case under dirs; returns the exit status. argv0: how this
 * program was started (to start itself again). */
int suite_run(const Opts *o, const char *argv0, char *const *dirs, int ndirs);

/* crash.c: a fatal signal while a custom-call handler runs in this process
 * is reported (target, instruction, signal) with exit 2. */
void crash_reports_install(void);

/* ---- Helpers (hlorun.c) ---- */

double now_ms(void);
bool has_suffix(const char *s, const char *suf);
/* malloc'd printf. Exits on out of memory. */
char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *xmalloc(size_t n);
#endif

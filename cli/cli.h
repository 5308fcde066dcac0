/* cli.h: declarations shared by the files of the hlorun command (cli/).
 *
 * hlorun.c holds usage, the options and main; determinism.c runs a module
 * under several thread counts (--determinism), reference.c beside a
 * reference (--reference, --reference-custom-call); run.c runs a module on
 * one device, devices.c on many; result.c prints, writes or compares a result;
 * debug.c observes a run (--trace, --check-nan, --stats,
 * --dump-custom-calls, progress); graph.c draws a module; casedir.c reads
 * the layout of a golden case directory; suite.c runs directories of cases
 * in parallel child processes (--suite, --record, --junit); crash.c reports
 * a handler's fatal signal; util.c holds the helpers all of them use.
 * passes.c runs every stage of an XLA pass dump (--passes); report.c
 * writes their --report FILE (JSON).
 * Calls run one way, down this list: hlorun.c; passes.c; determinism.c,
 * reduce.c; reference.c; report.c, suite.c, run.c, devices.c;
 * debug.c, result.c; graph.c, casedir.c, crash.c; util.c (suite.c starts
 * this program again rather than calling run.c). Everything goes through
 * the public API (hlorun.h). */
#ifndef HLORUN_CLI_CLI_H
#define HLORUN_CLI_CLI_H
#include "cli/util.h"
#include "hlorun.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct Binding { const char *target, *lib, *symbol; } Binding;

typedef struct Opts {
  const char *module;
  const char **inputs;
  int ninputs;
  const char *output;
  const char *expect;
  double rtol, atol;          /* < 0: per-type defaults */
  int64_t ulp;                /* --ulp N; -1: not given */
  const char *reference;      /* --reference REF */
  bool ref_f64;               /* --reference-precision f64 */
  const char *passes;         /* --passes DIR (no MODULE: every argument is an INPUT) */
  const char *passes_module;  /* --passes-module NAME */
  Binding *ref_bind;          /* --reference-custom-call TARGET=LIB[:SYMBOL] or
                                 TARGET=builtin (lib "builtin") */
  int nref_bind;
  int determinism;            /* --determinism N; 0: not asked */
  uint64_t ref_memory;        /* --reference-memory SIZE; 0: the library's default */
  const char *report;         /* --report FILE: JSON of the above (report.c) */
  char **copies;              /* owned: option values split in place (bindings) */
  int ncopies;
  bool random;
  uint64_t seed;
  long bench;                 /* 0 = no benchmark */
  int threads;
  uint64_t max_memory;
  bool print, explain;
  bool lenient;              /* --lenient: --print keeps unverified modules */
  const char *write_proto;    /* --write-proto FILE: the module as HloModuleProto */
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
  const char *graph;          /* --graph FILE (.dot, .gv, .svg, .png) */
  const char *graph_filter;   /* --graph-filter NAME[:DEPTH] */
  bool graph_collapse;        /* --graph-collapse: a fusion is one node */
  const char *extract;        /* --extract SPEC DIR (extract.c) */
  const char *extract_dir;
  bool force;                 /* --force: write into a non-empty directory */
  const char *save_snapshot;  /* --save-snapshot FILE (snapshot.c) */
  const char *reduce;         /* --reduce CONDITION (reduce.c), with -o DIR */

  /* Suites */
  bool suite;
  int jobs;                   /* 0 = number of cores */
  bool record;
  const char *junit;
  double timeout;             /* seconds per run (suites: per case, default 600); 0 = none */
  bool verbose;

  /* Many devices (devices.c) */
  int replicas, partitions;   /* 0: the module's own grid */
  bool per_device_inputs, per_device_outputs;
  const char *output_sharding;
} Opts;

/* ---- Case directories (casedir.c) ---- */

typedef struct Case {
  char *dir;                  /* as found */
  char *module;               /* DIR/module.hlo or DIR/case.hlo */
  char **inputs;              /* DIR/in0.{npy,npz,txt}, in1..., consecutive */
  int ninputs;
  char *expected;             /* DIR/expected.{npy,npz,txt}, or NULL */
  char *reference;            /* DIR/reference.hlo (runs as --reference), or NULL */
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

/* The custom-call bindings of o (--custom-call, --plugin, ...) as the
 * lines of a case's args file. */
void case_write_args(FILE *f, const Opts *o);
/* DIR/args (the bindings) and DIR/command (a shell line that replays the
 * case with --replay, plus options if not NULL). 0, or -1 after saying why. */
int case_write_command(const Opts *o, const char *dir, const char *options);

/* ---- Extracting with values (extract.c) ---- */

/* Options of the repro tools, beyond hlorun.c's own. */
enum { OPT_EXTRACT = 1000, OPT_FORCE, OPT_SAVE_SNAPSHOT, OPT_REDUCE };
/* 1 if c is one of them (*rc: 0, or the exit status of a bad use), else 0.
 * --extract SPEC DIR takes the next argument as DIR. */
int repro_option(int c, const char *arg, int argc, char **argv, Opts *o, int *rc);

/* DIR must be absent (it is created) or empty, unless force (then an old
 * case's files go). option names the option in messages. 0, or -1 after
 * saying why. */
int case_prepare_dir(const char *dir, bool force, const char *option);

typedef struct Extract Extract;
/* For --extract: check the spec and DIR, cut the module. The exit status;
 * *out NULL when o->extract is not set. */
int extract_new(HloCtx *ctx, const HloModule *m, const Opts *o, Extract **out);
/* The observer that captures the values (a debug_also observer). */
int extract_event(const HloEvent *e, void *user);
/* After the run: write the case directory. The exit status. */
int extract_finish(Extract *x);
void extract_free(Extract *x);

/* --reduce CONDITION -o DIR (reduce.c): shrink m while CONDITION holds and
 * write the smallest case. argv0: this program, started for each candidate. */
int reduce_run(HloCtx *ctx, const HloModule *m, const Opts *o, const char *argv0);

/* --save-snapshot: each device's run (in: ndev x parameters, res: ndev
 * results, NULL for devices of other processes) as an HloSnapshot. The
 * exit status. */
int snapshot_save(HloCtx *ctx, const HloModule *m, const Opts *o, HloBuffer *const *in,
                  HloBuffer *const *res, int ndev);

/* ---- Observing a run (debug.c) ---- */

typedef struct Debug Debug;
/* NULL when no debugging option asks for observation (and no progress). */
Debug *debug_new(const Opts *o, HloCtx *ctx, const HloModule *m, bool progress);
/* Set the observer on exe (once per executable). */
HloStatus debug_attach(Debug *d, HloExecutable *exe);
/* After a run, whether it succeeded, failed or was stopped: clear the
 * progress line; unless the observer stopped it, print --stats and draw
 * --stats --graph (debug_graph_failed says whether that failed). */
void debug_after_run(Debug *d, HloExecutable *exe, double wall_ms);
/* --dump-custom-calls: dump only the run-th call (from 0) of call site
 * `site`, as DIR/call-0000 (--reference-custom-call's diverging call). */
void debug_dump_only(Debug *d, const HloInstruction *site, int64_t run);
/* The run has several devices: lines name the device (no progress line). */
void debug_set_devices(Debug *d, int ndev);
/* Call fn first on every event too (a nonzero return stops the run). */
void debug_also(Debug *d, HloObserver fn, void *user);
/* The observer stopped the run (--check-nan found something). */
bool debug_stopped(const Debug *d);
void debug_free(Debug *d);

/* ---- Pictures (graph.c) ---- */

/* Self times per instruction, summed over a run (--stats with --graph). */
typedef struct GraphTimes GraphTimes;
GraphTimes *graph_times_new(void);   /* NULL when out of memory */
void graph_times_add(GraphTimes *t, const HloInstruction *i, uint64_t ns, int fused);
void graph_times_free(GraphTimes *t);
/* Draw m into o->graph (times may be NULL: no run). Returns the exit status. */
int graph_write(HloCtx *ctx, const HloModule *m, const Opts *o, const GraphTimes *times);
/* --stats --graph: the picture drawn after the run failed (exit 2). */
bool debug_graph_failed(const Debug *d);

/* ---- Suites (suite.c) ---- */

/* Run every case under dirs; returns the exit status. argv0: how this
 * program was started (to start itself again). */
int suite_run(const Opts *o, const char *argv0, char *const *dirs, int ndirs);

/* crash.c: a fatal signal while a custom-call handler runs in this process
 * is reported (target, instruction, signal) with exit 2. */
void crash_reports_install(void);

/* ---- Many devices (devices.c) ---- */

/* The grid to run m on (options over the module's header; says on standard
 * error when it was inferred from the collectives). */
void devices_grid(const HloModule *m, const Opts *o, int *replicas, int *partitions);
/* Should m run on its R x P grid? Not when it is not yet partitioned (no
 * device-dependent instruction) and every input has its parameter's own
 * shape: then it runs once, as one device. */
bool devices_wanted(HloCtx *ctx, const HloModule *m, const Opts *o, int replicas, int partitions);
/* in[d * np + k] (room for R * P * np): parameter k of device d, from o's
 * global inputs split by m's shardings (or --per-device-inputs, --random).
 * EXIT_OK, or an error already said. */
int devices_load_inputs(HloCtx *ctx, const HloModule *m, const Opts *o, int replicas,
                        int partitions, HloBuffer **in);
/* Print, write or compare (--expect) the result of every device's res: the
 * assembled global value, or each device's (--per-device-outputs). */
int devices_emit(HloCtx *ctx, const HloModule *m, const Opts *o, HloBuffer *const *res,
                 int replicas, int partitions);
/* Run m on every device of the grid, with global (or per-device) inputs,
 * and print, write or compare the assembled (or per-device) result. */
int devices_run(HloCtx *ctx, const HloModule *m, const Opts *o, int replicas, int partitions);
/* Run m on every device of the grid with o's global inputs and set
 * *global to the assembled result: EXIT_OK, or an error left in ctx's
 * diagnostics (input errors already said). inputs (may be NULL) gets the
 * per-device inputs, in[d * np + k] (free each and the array). For --passes. */
int devices_execute(HloCtx *ctx, const HloModule *m, const Opts *o, int replicas, int partitions,
                    HloBuffer **global, HloBuffer ***inputs);

/* ---- Comparing two runs (reference.c) ---- */

/* A context as main makes one (plugins, bindings, FFI options) with
 * `threads` kernel threads (0: all cores); rebind: the
 * --reference-custom-call bindings replace the module's. NULL after saying
 * why. */
HloCtx *context_like(const Opts *o, int threads, bool rebind);
/* --determinism N (determinism.c): N runs under different thread counts. */
int determinism_run(HloCtx *ctx, const HloModule *m, const Opts *o);
/* --reference REF: run m and REF, compare, name the first divergence; on
 * many devices (m's grid R x P, devices_wanted) per device. */
int reference_run(HloCtx *ctx, const HloModule *m, const Opts *o, int replicas, int partitions);
/* --passes DIR (passes.c): every stage of a pass dump, in step order; the
 * first pass whose result diverges. */
int passes_run(HloCtx *ctx, const Opts *o);
/* ---- --report FILE (report.c; jansson objects, NULL without --report) ---- */

struct json_t;
/* A report of `mode` ("reference", "passes", "determinism"), or NULL when
 * o has no --report (report_comparison and report_finish then do nothing). */
struct json_t *report_new(const Opts *o, const char *mode);
/* {instruction, opcode, computation, line, iteration, call}: null for -1. */
struct json_t *report_instruction(const HloInstruction *i, int64_t iteration, int64_t call);
/* d's first divergence as an object (null when none); reference: the
 * counterpart's module file. */
struct json_t *report_divergence(const HloDivergence *d, const char *reference);
/* d's result comparison, first divergence and counts, into r. */
void report_comparison(struct json_t *r, const HloDivergence *d, const char *reference);
/* Add exit and status (rc 0 agree, 1 differ, 2 error), write r to
 * --report FILE whole (and free it): rc, or EXIT_ERROR when it cannot be
 * written. */
int report_finish(const Opts *o, struct json_t *r, int rc);
/* Load --plugin LIB.so[:FUNCTION] into ctx. */
HloStatus load_plugin(HloCtx *ctx, const char *spec);

/* ---- One device (run.c) ---- */

/* Load m's inputs as o says, run m once on one device (--bench: N more
 * times) and print, write or compare the result: the exit status. */
int run_module(HloCtx *ctx, const HloModule *m, const Opts *o);
/* Read INPUTs (snapshot arguments, --random fills) for m's parameters into
 * in[0..nparams-1]: the exit status. */
int load_module_inputs(HloCtx *ctx, const HloModule *m, const Opts *o, HloBuffer **in);

/* ---- The result (result.c) ---- */

/* The comparison options of --rtol, --atol and --ulp (with --ulp, a
 * tolerance not given is 0 instead of its type's default). */
void compare_options(const Opts *o, HloCompareOptions *co);
/* Print or write res as -o says, then compare it with --expect: the exit
 * status. */
int emit_result(HloCtx *ctx, const Opts *o, HloBuffer *res);
/* Sort n run times and print 'bench: median_ms=X runs=N' to standard error. */
void print_bench(double *times, long n);
/* StableHLO interpreter test files (mlir_tests.c). */
bool mlir_test_file(const char *path);
int mlir_tests_run(HloCtx *ctx, const Opts *o);
#endif

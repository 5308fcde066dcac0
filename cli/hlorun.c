/* hlorun.c: the hlorun command (spec/cli.md): usage, options and main.
 * main parses the options, sets up the context (bindings, plugins), reads
 * the module and chooses what to do: print, write or explain it, draw it
 * (graph.c), run it on one device (run.c) or many (devices.c), run a suite
 * (suite.c) or replay a case (casedir.c). Exit codes: 0 ok, 1 golden
 * mismatch, 2 error. Uses only the public API (hlorun.h); all
 * interpretation happens in the library.
 *
 * Not here: loading inputs and running (run.c), printing and comparing the
 * result (result.c), the helpers every cli file uses (util.c). */
#include "cli.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f) {
  fprintf(f,
    "Usage: %s [OPTIONS] MODULE.hlo [INPUT ...]\n"
    "       %s --suite [OPTIONS] DIR...\n"
    "       %s --replay DIR [OPTIONS]\n"
    "Run an XLA HLO text module on the CPU and print its result as an HLO literal.\n"
    "\n"
    "MODULE.hlo is an HLO text module ('-' reads standard input), or XLA's\n"
    "HloSnapshot, HloUnoptimizedSnapshot, HloProto or HloModuleProto, binary or text\n"
    "(a snapshot without INPUTs replays its recorded arguments; an unoptimized one's\n"
    "partitions' shards are assembled by the parameters' shardings). INPUT number i\n"
    "feeds ENTRY parameter i: a .npy file, a\n"
    "text file holding one HLO literal, a LiteralProto, or one .npz\n"
    "holding parameters as arr_0, arr_1, ... (a tuple parameter takes a .npz of its\n"
    "leaves, flattened depth-first). The parameter's type says how raw bits are read\n"
    "(bf16 as <V2, 8-bit floats as |V1, s4/u4/s2/u2 one per byte as |i1/|u1); a dtype\n"
    "or shape that does not match is an error.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE        write the result to FILE: .npy (array), .npz (leaves as\n"
    "                           arr_0, arr_1, ...), anything else literal text\n"
    "      --random[=SEED]      fill parameters without an INPUT (and elided constants\n"
    "                           {...}) with deterministic pseudo-random values: floats\n"
    "                           in [-1,1), signed integers in [-8,8), unsigned in [0,16)\n"
    "                           (default SEED 0)\n"
    "      --expect FILE        compare the result with FILE (.npy, .npz, literal text,\n"
    "                           or an HloSnapshot's recorded result);\n"
    "                           exit 1 and report the differences on a mismatch\n"
    "      --rtol R, --atol A   tolerances for --expect: an element passes when\n"
    "                           |got - want| <= A + R*|want|; NaN matches NaN. Defaults:\n"
    "                           f16 5e-3/5e-3, bf16 5e-2/5e-2, f32 and c64 1e-4/1e-4,\n"
    "                           f64 and c128 1e-10/1e-10, 8-bit and 4-bit floats\n"
    "                           0.125/0.125; integers, pred: exact\n"
    "      --ulp N              also pass a float element within N representable\n"
    "                           values of its type (both finite); a tolerance not\n"
    "                           given is then 0, not its default (--expect, --suite,\n"
    "                           --reference)\n"
    "      --bench N            run N times after one warm-up run and print\n"
    "                           'bench: median_ms=X runs=N' to standard error\n"
    "      --threads N          threads for kernels (default: all cores)\n"
    "      --max-memory BYTES   limit on live values, kernel scratch and handlers'\n"
    "                           FFI allocations (suffixes K, M, G; default 75%% of\n"
    "                           physical memory, at most 16G)\n"
    "      --print              parse and verify the module and print it as canonical\n"
    "                           HLO text, without running it (exit 2 when it does not\n"
    "                           verify)\n"
    "      --lenient            with --print: print a module that parses but does not\n"
    "                           verify, the verifier's findings as warnings (XLA's parser\n"
    "                           keeps such modules)\n"
    "      --write-proto FILE   parse and verify the module and write it to FILE as a\n"
    "                           binary xla.HloModuleProto (XLA's --xla_dump_hlo_as_proto\n"
    "                           form), without running it; with --print also print it\n"
    "      --custom-call TARGET=LIB.so[:SYMBOL]\n"
    "                           bind custom-call target TARGET to SYMBOL (default:\n"
    "                           TARGET) in LIB.so (repeatable)\n"
    "      --plugin LIB.so[:FUNCTION]\n"
    "                           load a plugin that registers custom-call handlers\n"
    "      --explain-custom-calls\n"
    "                           list the module's custom calls and how each would run\n"
    "      --ffi-members[=TARGET]\n"
    "                           pass custom calls of TARGET (default: every target)\n"
    "                           their instruction's members as the typed-FFI attribute\n"
    "                           'hlorun.instruction' (repeatable)\n"
    "      --ffi-all-stages     run typed FFI bundles' prepare and initialize stages\n"
    "                           before every execute, as XLA:GPU does (default: as\n"
    "                           XLA:CPU, instantiate once per call site, then execute)\n"
    "      --isolate-custom-calls\n"
    "                           run each custom call in a worker process: a handler\n"
    "                           that crashes, exits or hangs fails the run (exit 2)\n"
    "                           and its inputs are saved in hlorun-crash-TARGET-PID/\n"
    "      --custom-call-timeout SECONDS\n"
    "                           time limit of one isolated custom call (default 60)\n"
    "      --crash-dir DIR      where isolated crashes save their inputs (default .)\n"
    "      --max-iterations N   fail a while loop that runs more than N iterations\n"
    "      --timeout SECONDS    fail a run that takes longer than SECONDS (suites:\n"
    "                           kill a case after SECONDS, default 600)\n"
    "\n"
    "Many devices (a module with replica_count x num_partitions > 1):\n"
    "      --replicas R, --partitions P\n"
    "                           run on R replicas x P partitions instead of the\n"
    "                           module's own counts (device d = replica*P + partition);\n"
    "                           every device is a thread; under 'mpirun -np N' the\n"
    "                           devices are split into N blocks, one per process\n"
    "      --per-device-inputs  each INPUT is a .npz holding the parameter's value on\n"
    "                           every device as d0, d1, ... (default: INPUTs are\n"
    "                           global values, split by each parameter's sharding)\n"
    "      --per-device-outputs print or write (-o out.npz: d0, d1, ...) every device's\n"
    "                           result instead of the global one\n"
    "      --output-sharding SHARDING\n"
    "                           assemble the global result by SHARDING (HLO syntax,\n"
    "                           e.g. '{devices=[4,1]<=[4]}') instead of the ROOT's\n"
    "\n"
    "Finding what goes wrong:\n"
    "      --reference REF      run REF (text, proto or snapshot) on the same inputs,\n"
    "                           compare the results as --expect does, then every\n"
    "                           instruction with a counterpart in REF (same name, or\n"
    "                           opcode, shape and metadata), and print the first\n"
    "                           whose value differs: 'first divergence: ...'; on\n"
    "                           many devices both run on one grid and the line\n"
    "                           names the device ('... on device D ...')\n"
    "      --determinism N      run N times (2 to 64) with different thread counts,\n"
    "                           hash every instruction's bits, and name the first\n"
    "                           whose result differs for the same operand bits\n"
    "                           ('first nondeterministic: ...', exit 1)\n"
    "      --reference-custom-call TARGET=LIB.so[:SYMBOL]\n"
    "                           the reference (REF, or MODULE itself) binds TARGET\n"
    "                           to SYMBOL in LIB.so instead (TARGET=builtin: hlorun's\n"
    "                           own implementation); the first diverging call is\n"
    "                           written as a --replay case (to the --dump-custom-calls\n"
    "                           DIR, default hlorun-divergent-call)\n"
    "      --reference-precision f64\n"
    "                           the reference is MODULE itself with every float\n"
    "                           value carried in f64 (rounded only where MODULE\n"
    "                           converts): the first instruction low precision\n"
    "                           gets wrong (an f16 overflow, a bf16 cancellation)\n"
    "      --passes DIR [INPUT ...]\n"
    "                           (no MODULE) run every stage of an XLA pass dump\n"
    "                           (--xla_dump_hlo_pass_re=.*) in step order on the\n"
    "                           INPUTs: 'first divergent pass: PASS (FILE)', then\n"
    "                           its first divergence against the stage before\n"
    "      --passes-module NAME the module of DIR to take (DIR holds several)\n"
    "      --reference-memory SIZE\n"
    "                           reference values held at once while comparing (64M,\n"
    "                           2G; default: the reference run's peak, at least\n"
    "                           64 MiB); more than that reruns both modules\n"
    "      --report FILE        also write what the above found as JSON to FILE\n"
    "                           (schema: doc/divergence.md)\n"
    "\n"
    "Debugging:\n"
    "      --trace[=FILTER]     print every instruction as it runs: name, opcode, line,\n"
    "                           shape, min/max/mean, NaN and Inf counts, first elements\n"
    "                           (standard error). FILTER: comma-separated patterns\n"
    "                           matched against the name or opcode, as substrings, or\n"
    "                           as globs when they hold * ? or [\n"
    "      --check-nan          stop at the first instruction whose result holds a NaN\n"
    "                           or infinity that none of its operands held; report it\n"
    "                           with its line and operand summaries (exit 2)\n"
    "      --stats              print per-opcode counts and times, wall time and peak\n"
    "                           memory at the end (standard error)\n"
    "      --dump-custom-calls DIR\n"
    "                           write each custom call executed to DIR/call-NNNN/:\n"
    "                           module.hlo (the call alone), in*.npy operands,\n"
    "                           expected.npy result, call.txt, args (its bindings)\n"
    "      --replay DIR         run a case directory (a dump, or a suite case) alone:\n"
    "                           DIR/module.hlo on DIR/in*, compared with DIR/expected.*\n"
    "      --only-instruction NAME\n"
    "                           run only instruction NAME of MODULE; the INPUTs feed\n"
    "                           its operands (with --print: show that module)\n"
    "      --extract [COMP/]NAME[@K][#DEVICE][:DEPTH] DIR\n"
    "                           write NAME and the instructions within DEPTH\n"
    "                           (default 0) operand steps above it as a case DIR\n"
    "                           (module.hlo, in*.npy with the real values of this\n"
    "                           run, expected.npy, command) for --replay and --suite;\n"
    "                           @K: NAME's K-th run (from 0: a loop's iteration),\n"
    "                           #DEVICE: on that device (default 0)\n"
    "      --reduce CONDITION -o DIR\n"
    "                           shrink MODULE while CONDITION holds (nan,\n"
    "                           error[=REGEX], crash, mismatch, command=CMD), cut\n"
    "                           values replaced by their real values; the smallest\n"
    "                           module as a case DIR (--timeout: per candidate)\n"
    "      --force              write --extract's or --reduce's DIR even when it is\n"
    "                           not empty\n"
    "      --save-snapshot FILE write the run as a binary xla.HloSnapshot (module,\n"
    "                           arguments, result) that hlorun replays and --expects;\n"
    "                           several devices: FILE.dD.EXT per device\n"
    "      --graph FILE         draw the module (.dot; .svg or .png through Graphviz's\n"
    "                           dot) instead of running it; with --stats, run it and\n"
    "                           show each instruction's time and share, coloured\n"
    "      --graph-filter NAME[:DEPTH]\n"
    "                           draw only instructions within DEPTH (default 2)\n"
    "                           operand/user steps of NAME\n"
    "      --graph-collapse     draw each fusion as one node, without its body\n"
    "      --progress, --no-progress\n"
    "                           progress line on standard error (default: when it is\n"
    "                           a terminal)\n"
    "\n"
    "Golden suites:\n"
    "  hlorun --suite [OPTIONS] DIR...\n"
    "                           run every case under DIR (a directory holding\n"
    "                           module.hlo or case.hlo, in0.npy|.npz|.txt ...,\n"
    "                           expected.npy|.npz|.txt, optional tolerance, case.json\n"
    "                           or meta.json, args); one line per failing case, then\n"
    "                           'N passed, N failed'\n"
    "  -j, --jobs N             cases run at once (default: the number of cores)\n"
    "      --record             rewrite the golden file of every case whose output\n"
    "                           differs (or has none), and name the files rewritten\n"
    "      --junit FILE         also write a JUnit XML report to FILE\n"
    "  -v, --verbose            show each failing case's full report\n"
    "\n"
    "  -h, --help               show this help and exit\n"
    "  -V, --version            show the version and exit\n"
    "\n"
    "Exit status: 0 success, 1 result differs from --expect (a suite: a case failed),\n"
    "2 any error (including --check-nan finding a NaN).\n",
    prog, prog, prog);
}

static int die_usage(const char *fmt, const char *arg) {
  fprintf(stderr, "%s: ", prog);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry '%s --help' for more information.\n", prog);
  return EXIT_ERROR;
}

static bool parse_u64(const char *s, uint64_t *out, bool suffixes) {
  char *e;
  errno = 0;
  if (!s || !*s || *s == '-') return false;
  unsigned long long v = strtoull(s, &e, 0);
  if (errno || e == s) return false;
  uint64_t mul = 1;
  if (suffixes && *e) {
    switch (*e) {
    case 'k': case 'K': mul = 1ull << 10; break;
    case 'm': case 'M': mul = 1ull << 20; break;
    case 'g': case 'G': mul = 1ull << 30; break;
    case 't': case 'T': mul = 1ull << 40; break;
    default: return false;
    }
    e++;
    if (*e == 'i' || *e == 'I') e++;
    if (*e == 'b' || *e == 'B') e++;
  }
  if (*e) return false;
  if (mul > 1 && v > UINT64_MAX / mul) return false;
  *out = v * mul;
  return true;
}

static bool parse_double(const char *s, double *out) {
  char *e;
  errno = 0;
  double v = strtod(s, &e);
  if (errno || e == s || *e || !(v >= 0)) return false;
  *out = v;
  return true;
}

enum {
  OPT_RANDOM = 256, OPT_EXPECT, OPT_RTOL, OPT_ATOL, OPT_BENCH, OPT_THREADS, OPT_MAXMEM,
  OPT_PRINT, OPT_CUSTOM, OPT_PLUGIN, OPT_EXPLAIN, OPT_MEMBERS, OPT_TRACE, OPT_CHECK_NAN,
  OPT_STATS, OPT_DUMP_CC, OPT_REPLAY, OPT_ONLY, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_SUITE,
  OPT_RECORD, OPT_JUNIT, OPT_TIMEOUT,
  OPT_ISOLATE, OPT_CC_TIMEOUT, OPT_CRASH_DIR, OPT_MAX_ITER, OPT_ALL_STAGES,
  OPT_REPLICAS, OPT_PARTITIONS, OPT_PER_DEV_IN, OPT_PER_DEV_OUT, OPT_OUT_SHARDING,
  OPT_GRAPH, OPT_GRAPH_FILTER, OPT_GRAPH_COLLAPSE,
  OPT_LENIENT, OPT_WRITE_PROTO, OPT_ULP, OPT_REFERENCE, OPT_REF_CUSTOM, OPT_DETERMINISM,
  OPT_REF_PRECISION, OPT_PASSES, OPT_PASSES_MODULE, OPT_REF_MEMORY, OPT_REPORT
};

/* Remember an option for the cases of a suite, as written. */
static void pass_on(Opts *o, const char *name, const char *value) {
  o->pass[o->npass++] = value ? xprintf("--%s=%s", name, value) : xprintf("--%s", name);
}

/* Reliability options (limits, isolation): 1 if c was one of them (0 ok,
 * else the exit code in *rc), 0 if not. */
static int parse_reliability(int c, const char *arg, Opts *o, int *rc) {
  uint64_t u;
  *rc = EXIT_OK;
  switch (c) {
  case OPT_ISOLATE: o->isolate = true; return 1;
  case OPT_CC_TIMEOUT:
    if (!parse_double(arg, &o->cc_timeout) || o->cc_timeout <= 0)
      *rc = die_usage("--custom-call-timeout: bad time '%s' (seconds, > 0)", arg);
    return 1;
  case OPT_CRASH_DIR: o->crash_dir = arg; return 1;
  case OPT_MAX_ITER:
    if (!parse_u64(arg, &u, false) || u < 1 || u > INT64_MAX)
      *rc = die_usage("--max-iterations: bad count '%s' (a positive integer)", arg);
    o->max_iterations = (int64_t)u;
    return 1;
  case OPT_TIMEOUT:
    if (!parse_double(arg, &o->timeout) || o->timeout <= 0)
      *rc = die_usage("--timeout: bad time '%s' (seconds, > 0)", arg);
    return 1;
  default: return 0;
  }
}

static int parse_args(int argc, char **argv, Opts *o) {
  static const struct option longs[] = {
    {"output", required_argument, NULL, 'o'},
    {"random", optional_argument, NULL, OPT_RANDOM},
    {"expect", required_argument, NULL, OPT_EXPECT},
    {"rtol", required_argument, NULL, OPT_RTOL},
    {"atol", required_argument, NULL, OPT_ATOL},
    {"ulp", required_argument, NULL, OPT_ULP},
    {"reference", required_argument, NULL, OPT_REFERENCE},
    {"reference-custom-call", required_argument, NULL, OPT_REF_CUSTOM},
    {"reference-precision", required_argument, NULL, OPT_REF_PRECISION},
    {"passes", required_argument, NULL, OPT_PASSES},
    {"passes-module", required_argument, NULL, OPT_PASSES_MODULE},
    {"determinism", required_argument, NULL, OPT_DETERMINISM},
    {"reference-memory", required_argument, NULL, OPT_REF_MEMORY},
    {"report", required_argument, NULL, OPT_REPORT},
    {"bench", required_argument, NULL, OPT_BENCH},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"max-memory", required_argument, NULL, OPT_MAXMEM},
    {"print", no_argument, NULL, OPT_PRINT},
    {"lenient", no_argument, NULL, OPT_LENIENT},
    {"write-proto", required_argument, NULL, OPT_WRITE_PROTO},
    {"custom-call", required_argument, NULL, OPT_CUSTOM},
    {"plugin", required_argument, NULL, OPT_PLUGIN},
    {"explain-custom-calls", no_argument, NULL, OPT_EXPLAIN},
    {"ffi-members", optional_argument, NULL, OPT_MEMBERS},
    {"ffi-all-stages", no_argument, NULL, OPT_ALL_STAGES},
    {"trace", optional_argument, NULL, OPT_TRACE},
    {"check-nan", no_argument, NULL, OPT_CHECK_NAN},
    {"stats", no_argument, NULL, OPT_STATS},
    {"dump-custom-calls", required_argument, NULL, OPT_DUMP_CC},
    {"replay", required_argument, NULL, OPT_REPLAY},
    {"only-instruction", required_argument, NULL, OPT_ONLY},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"suite", no_argument, NULL, OPT_SUITE},
    {"jobs", required_argument, NULL, 'j'},
    {"record", no_argument, NULL, OPT_RECORD},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"verbose", no_argument, NULL, 'v'},
    {"isolate-custom-calls", no_argument, NULL, OPT_ISOLATE},
    {"custom-call-timeout", required_argument, NULL, OPT_CC_TIMEOUT},
    {"crash-dir", required_argument, NULL, OPT_CRASH_DIR},
    {"max-iterations", required_argument, NULL, OPT_MAX_ITER},
    {"replicas", required_argument, NULL, OPT_REPLICAS},
    {"partitions", required_argument, NULL, OPT_PARTITIONS},
    {"per-device-inputs", no_argument, NULL, OPT_PER_DEV_IN},
    {"per-device-outputs", no_argument, NULL, OPT_PER_DEV_OUT},
    {"output-sharding", required_argument, NULL, OPT_OUT_SHARDING},
    {"graph", required_argument, NULL, OPT_GRAPH},
    {"graph-filter", required_argument, NULL, OPT_GRAPH_FILTER},
    {"graph-collapse", no_argument, NULL, OPT_GRAPH_COLLAPSE},
    {"extract", required_argument, NULL, OPT_EXTRACT},
    {"force", no_argument, NULL, OPT_FORCE},
    {"save-snapshot", required_argument, NULL, OPT_SAVE_SNAPSHOT},
    {"reduce", required_argument, NULL, OPT_REDUCE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
  };
  o->rtol = o->atol = -1;
  o->ulp = -1;
  o->progress = -1;
  o->bind = calloc((size_t)argc, sizeof *o->bind);
  o->ref_bind = calloc((size_t)argc, sizeof *o->ref_bind);
  o->copies = calloc((size_t)argc, sizeof *o->copies);
  o->plugins = calloc((size_t)argc, sizeof *o->plugins);
  o->members = calloc((size_t)argc, sizeof *o->members);
  o->pass = calloc((size_t)argc, sizeof *o->pass);
  if (!o->bind || !o->ref_bind || !o->copies || !o->plugins || !o->members || !o->pass) {
    fprintf(stderr, "%s: out of memory\n", prog);
    return EXIT_ERROR;
  }
  int c;
  uint64_t u;
  optind = 0;   /* glibc: start afresh (--replay parses a second command line) */
  while ((c = getopt_long(argc, argv, "o:j:vhV", longs, NULL)) != -1) {
    int rrc;
    if (parse_reliability(c, optarg, o, &rrc) || repro_option(c, optarg, argc, argv, o, &rrc)) {
      if (rrc != EXIT_OK) return rrc;
      continue;
    }
    switch (c) {
    case 'o': o->output = optarg; break;
    case OPT_RANDOM:
      pass_on(o, "random", optarg);
      o->random = true;
      if (optarg && !parse_u64(optarg, &o->seed, false))
        return die_usage("--random: bad seed '%s' (a non-negative integer)", optarg);
      break;
    case OPT_EXPECT: o->expect = optarg; break;
    case OPT_REFERENCE: o->reference = optarg; break;
    case OPT_PASSES: o->passes = optarg; break;
    case OPT_PASSES_MODULE: o->passes_module = optarg; break;
    case OPT_REF_PRECISION:
      if (strcmp(optarg, "f64") != 0)
        return die_usage("--reference-precision: expected f64 (the only precision a reference "
                         "carries), got '%s'", optarg);
      o->ref_f64 = true;
      break;
    case OPT_REF_MEMORY:
      if (!parse_u64(optarg, &o->ref_memory, true) || o->ref_memory == 0)
        return die_usage("--reference-memory: bad size '%s' (bytes, or with K, M, G)", optarg);
      break;
    case OPT_REPORT: o->report = optarg; break;
    case OPT_DETERMINISM:
      if (!parse_u64(optarg, &u, false) || u < 2 || u > 64)
        return die_usage("--determinism: bad run count '%s' (2 to 64)", optarg);
      o->determinism = (int)u;
      break;
    case OPT_RTOL:
      if (!parse_double(optarg, &o->rtol)) return die_usage("--rtol: bad tolerance '%s'", optarg);
      break;
    case OPT_ATOL:
      if (!parse_double(optarg, &o->atol)) return die_usage("--atol: bad tolerance '%s'", optarg);
      break;
    case OPT_ULP:
      if (!parse_u64(optarg, &u, false) || u > (1ull << 62))
        return die_usage("--ulp: bad count '%s' (a non-negative integer)", optarg);
      o->ulp = (int64_t)u;
      pass_on(o, "ulp", optarg);
      break;
    case OPT_BENCH:
      if (!parse_u64(optarg, &u, false) || u < 1 || u > 1000000000)
        return die_usage("--bench: bad run count '%s' (a positive integer)", optarg);
      o->bench = (long)u;
      break;
    case OPT_THREADS:
      if (!parse_u64(optarg, &u, false) || u < 1 || u > 4096)
        return die_usage("--threads: bad thread count '%s' (1 to 4096)", optarg);
      o->threads = (int)u;
      pass_on(o, "threads", optarg);
      break;
    case OPT_MAXMEM:
      if (!parse_u64(optarg, &o->max_memory, true) || o->max_memory == 0)
        return die_usage("--max-memory: bad size '%s' (bytes, or with K, M, G)", optarg);
      pass_on(o, "max-memory", optarg);
      break;
    case OPT_REPLICAS:
    case OPT_PARTITIONS:
      if (!parse_u64(optarg, &u, false) || u < 1 || u > 4096)
        return die_usage(c == OPT_REPLICAS ? "--replicas: bad count '%s' (1 to 4096)"
                                           : "--partitions: bad count '%s' (1 to 4096)", optarg);
      if (c == OPT_REPLICAS) o->replicas = (int)u;
      else o->partitions = (int)u;
      pass_on(o, c == OPT_REPLICAS ? "replicas" : "partitions", optarg);
      break;
    case OPT_PER_DEV_IN: o->per_device_inputs = true; break;
    case OPT_PER_DEV_OUT: o->per_device_outputs = true; break;
    case OPT_OUT_SHARDING: o->output_sharding = optarg; break;
    case OPT_PRINT: o->print = true; break;
    case OPT_LENIENT: o->lenient = true; break;
    case OPT_WRITE_PROTO: o->write_proto = optarg; break;
    case OPT_EXPLAIN: o->explain = true; break;
    case OPT_REF_CUSTOM:
    case OPT_CUSTOM: {
      if (c == OPT_CUSTOM) pass_on(o, "custom-call", optarg);
      /* Split a copy: --replay parses the same argv strings again. */
      optarg = o->copies[o->ncopies++] = xprintf("%s", optarg);
      char *eq = strchr(optarg, '=');
      if (!eq || eq == optarg || !eq[1])
        return die_usage(c == OPT_CUSTOM ? "--custom-call: expected TARGET=LIB.so[:SYMBOL], got '%s'"
                         : "--reference-custom-call: expected TARGET=LIB.so[:SYMBOL] or "
                           "TARGET=builtin, got '%s'", optarg);
      *eq = 0;
      Binding *b = c == OPT_CUSTOM ? &o->bind[o->nbind++] : &o->ref_bind[o->nref_bind++];
      b->target = optarg;
      b->lib = eq + 1;
      char *colon = strrchr(eq + 1, ':');
      if (colon && colon[1] && !strchr(colon, '/')) { *colon = 0; b->symbol = colon + 1; }
      break;
    }
    case OPT_PLUGIN:
      pass_on(o, "plugin", optarg);
      o->plugins[o->nplugins++] = optarg;
      break;
    case OPT_ALL_STAGES:
      pass_on(o, "ffi-all-stages", NULL);
      o->all_stages = true;
      break;
    case OPT_MEMBERS:
      pass_on(o, "ffi-members", optarg);
      o->members[o->nmembers++] = optarg ? optarg : "";
      break;
    case OPT_TRACE: o->trace = true; o->trace_filter = optarg; break;
    case OPT_CHECK_NAN: o->check_nan = true; break;
    case OPT_STATS: o->stats = true; break;
    case OPT_GRAPH: o->graph = optarg; break;
    case OPT_GRAPH_FILTER: o->graph_filter = optarg; break;
    case OPT_GRAPH_COLLAPSE: o->graph_collapse = true; break;
    case OPT_DUMP_CC: o->dump_dir = optarg; break;
    case OPT_REPLAY: o->replay = optarg; break;
    case OPT_ONLY: o->only = optarg; break;
    case OPT_PROGRESS: o->progress = 1; break;
    case OPT_NO_PROGRESS: o->progress = 0; break;
    case OPT_SUITE: o->suite = true; break;
    case OPT_RECORD: o->record = true; break;
    case OPT_JUNIT: o->junit = optarg; break;
    case 'v': o->verbose = true; break;
    case 'j':
      if (!parse_u64(optarg, &u, false) || u < 1 || u > 4096)
        return die_usage("--jobs: bad job count '%s' (1 to 4096)", optarg);
      o->jobs = (int)u;
      break;
    case 'h': usage(stdout); exit(EXIT_OK);
    case 'V':
      printf("hlorun %s\n", hlo_version());
      exit(EXIT_OK);
    default:
      fprintf(stderr, "Try '%s --help' for more information.\n", prog);
      return EXIT_ERROR;
    }
  }
  if (o->passes_module && !o->passes) return die_usage("%s", "--passes-module goes with --passes DIR");
  bool comparing = o->reference || o->nref_bind || o->ref_f64 || o->passes;
  if (o->ref_memory && !comparing)
    return die_usage("%s", "--reference-memory goes with --reference, --reference-custom-call, "
                     "--reference-precision or --passes");
  if (o->report && !(comparing || o->determinism))
    return die_usage("%s", "--report goes with --reference, --reference-custom-call, "
                     "--reference-precision, --passes or --determinism");
  if (o->suite || o->passes) {
    o->inputs = (const char **)argv + optind;   /* the directories; --passes: the INPUTs */
    o->ninputs = argc - optind;
    return EXIT_OK;
  }
  if (optind >= argc) return o->replay ? EXIT_OK : die_usage("%s", "missing MODULE.hlo");
  o->module = argv[optind++];
  o->inputs = (const char **)argv + optind;
  o->ninputs = argc - optind;
  return EXIT_OK;
}

static void opts_free(Opts *o) {
  free(o->bind);
  free(o->ref_bind);
  for (int i = 0; i < o->ncopies; i++) free(o->copies[i]);
  free(o->copies);
  free(o->plugins);
  free(o->members);
  for (int i = 0; i < o->npass; i++) free(o->pass[i]);
  free(o->pass);
  memset(o, 0, sizeof *o);
}

/* Options that make no sense with --suite (each case is a run of its own). */
static int suite_conflicts(const Opts *o) {
  const char *bad = o->output ? "-o" : o->expect ? "--expect" : o->trace ? "--trace"
                  : o->check_nan ? "--check-nan" : o->stats ? "--stats" : o->graph ? "--graph"
                  : o->dump_dir ? "--dump-custom-calls" : o->replay ? "--replay"
                  : o->only ? "--only-instruction" : o->print ? "--print" : o->write_proto ? "--write-proto"
                  : o->explain ? "--explain-custom-calls" : o->bench ? "--bench"
                  : o->reference ? "--reference (a case carries its own reference.hlo)"
                  : o->report ? "--report" : o->ref_memory ? "--reference-memory" : NULL;
  if (bad) return die_usage("%s cannot be used with --suite (run one case alone with --replay DIR)", bad);
  if (o->ninputs == 0) return die_usage("%s", "--suite needs at least one DIR");
  return EXIT_OK;
}

/* --replay DIR: the command line that runs the case alone: the case's own
 * options (its args file, tolerance, golden file) first, so that options
 * given on the command line win, then the module and its inputs. */
static char **replay_argv(int argc, char **argv, const Case *c, int *nout, char **owned) {
  char **v = xmalloc((size_t)(argc + c->nargs + c->ninputs + 8) * sizeof *v);
  int n = 0;
  v[n++] = argv[0];
  for (int i = 0; i < c->nargs; i++) v[n++] = c->args[i];
  if (c->rtol >= 0) v[n++] = owned[0] = xprintf("--rtol=%.17g", c->rtol);
  if (c->atol >= 0) v[n++] = owned[1] = xprintf("--atol=%.17g", c->atol);
  if (c->expected) v[n++] = owned[2] = xprintf("--expect=%s", c->expected);
  if (c->reference) v[n++] = owned[3] = xprintf("--reference=%s", c->reference);
  for (int i = 1; i < argc; i++) v[n++] = argv[i];
  v[n++] = "--";
  v[n++] = c->module;
  for (int i = 0; i < c->ninputs; i++) v[n++] = c->inputs[i];
  v[n] = NULL;
  *nout = n;
  return v;
}

/* Host callbacks without results (jax.debug.print) print here. */
static void write_stderr(void *user, const char *text, size_t len) {
  (void)user;
  fwrite(text, 1, len, stderr);
  fflush(stderr);
}

static bool is_directory(const char *p) {
  struct stat st;
  return strcmp(p, "-") != 0 && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int main(int argc, char **argv) {
  Opts o = {0};
  Case rc_case = {0};
  char **rargv = NULL, *owned[4] = {NULL, NULL, NULL, NULL};
  int rargc = 0;
  HloCtx *ctx = NULL;
  HloModule *m = NULL, *whole = NULL;
  int rc = parse_args(argc, argv, &o);
  if (rc != EXIT_OK) goto out;
  crash_reports_install();
  /* A directory where MODULE.hlo goes: the suite of cases under it. */
  if (!o.suite && !o.replay && o.module && is_directory(o.module)) {
    o.suite = true;
    o.inputs--;
    o.ninputs++;
  }
  if (!o.suite && (o.record || o.junit || o.jobs)) {
    rc = die_usage("%s", "--record, --junit and --jobs go with --suite DIR...");
    goto out;
  }
  if (o.suite) {
    if ((rc = suite_conflicts(&o)) == EXIT_OK)
      rc = suite_run(&o, argv[0], (char *const *)o.inputs, o.ninputs);
    goto out;
  }
  if (o.replay) {
    if (o.module) { rc = die_usage("--replay %s takes no MODULE or INPUT", o.replay); goto out; }
    if (case_load(o.replay, &rc_case) != 0) { rc = EXIT_ERROR; goto out; }
    rargv = replay_argv(argc, argv, &rc_case, &rargc, owned);
    opts_free(&o);
    if ((rc = parse_args(rargc, rargv, &o)) != EXIT_OK) goto out;
  }
  HloCtxOptions co = {sizeof co, o.threads, o.max_memory, 0,
                     o.isolate, o.cc_timeout, o.crash_dir};
  if (hlo_ctx_new(&co, &ctx) != HLO_OK) {
    fprintf(stderr, "%s: error: cannot create the interpreter context\n", prog);
    rc = EXIT_ERROR;
    goto out;
  }
  hlo_ctx_set_callback_output(ctx, write_stderr, NULL);   /* jax.debug.print */
  for (int i = 0; i < o.nbind; i++)
    if (hlo_ctx_bind_custom_call(ctx, o.bind[i].target, o.bind[i].lib, o.bind[i].symbol) != HLO_OK) {
      rc = fail_with(ctx, "cannot bind a custom call");
      goto out;
    }
  for (int i = 0; i < o.nplugins; i++)
    if (load_plugin(ctx, o.plugins[i]) != HLO_OK) {
      rc = fail_with(ctx, "cannot load a plugin");
      goto out;
    }
  for (int i = 0; i < o.nmembers; i++)
    if (hlo_ctx_set_instruction_members(ctx, *o.members[i] ? o.members[i] : NULL, 1) != HLO_OK) {
      rc = fail_with(ctx, "--ffi-members");
      goto out;
    }
  if (o.all_stages) hlo_ctx_set_ffi_all_stages(ctx, 1);
  if (o.passes) {
    if (o.reference || o.nref_bind || o.ref_f64 || o.determinism || o.replay || o.expect ||
        o.output || o.print || o.write_proto)
      rc = die_usage("%s", "--passes DIR takes INPUTs only: it cannot be used with --reference, "
                     "--reference-custom-call, --reference-precision, --determinism, --replay, "
                     "--expect, -o, --print or --write-proto");
    else
      rc = passes_run(ctx, &o);
    goto out;
  }
  if (!o.print && !o.write_proto && o.ninputs == 0 && mlir_test_file(o.module)) {
    rc = mlir_tests_run(ctx, &o);
    goto out;
  }
  if (hlo_module_load(ctx, o.module, &m) != HLO_OK) { rc = fail_with(ctx, "cannot read the module"); goto out; }
  if (o.only) {
    const HloInstruction *ins = hlo_module_find_instruction(m, o.only);
    if (!ins) {
      fprintf(stderr, "%s: error: %s has no instruction named '%s'\n", prog, o.module, o.only);
      rc = EXIT_ERROR;
      goto out;
    }
    whole = m;
    m = NULL;
    if (hlo_module_extract(ctx, whole, ins, &m) != HLO_OK) {
      rc = fail_with(ctx, "cannot run the instruction alone");
      goto out;
    }
  }
  if (o.print || o.write_proto) {
    /* The contract: --print verifies. XLA's parser keeps modules that parse
     * but do not verify: --lenient does too, the findings as warnings. */
    if (!o.lenient) {
      if (hlo_module_verify(ctx, m) != HLO_OK) { rc = fail_with(ctx, "the module does not verify"); goto out; }
    } else {
      hlo_module_verify_warn(ctx, m, NULL);
    }
    if (o.write_proto) {
      void *bytes;
      size_t n;
      if (hlo_module_to_proto(ctx, m, &bytes, &n) != HLO_OK) { rc = fail_with(ctx, "--write-proto"); goto out; }
      FILE *f = fopen(o.write_proto, "wb");
      bool ok = f && fwrite(bytes, 1, n, f) == n;
      ok = f && fclose(f) == 0 && ok;
      hlo_free(bytes);
      if (!ok) {
        fprintf(stderr, "%s: error: cannot write %s\n", prog, o.write_proto);
        rc = EXIT_ERROR;
        goto out;
      }
      if (!o.print) { flush_diags(ctx); rc = EXIT_OK; goto out; }
    }
    char *text;
    size_t len;
    if (hlo_module_print(ctx, m, &text, &len) != HLO_OK) { rc = fail_with(ctx, "printing"); goto out; }
    flush_diags(ctx);
    fwrite(text, 1, len, stdout);
    hlo_free(text);
    rc = fflush(stdout) == 0 ? EXIT_OK : EXIT_ERROR;
    goto out;
  }
  if (o.explain) {
    char *text;
    if (hlo_module_explain_custom_calls(ctx, m, &text) != HLO_OK) { rc = fail_with(ctx, "explain"); goto out; }
    flush_diags(ctx);
    fputs(text, stdout);
    hlo_free(text);
    rc = EXIT_OK;
    goto out;
  }
  if (o.graph && !o.stats) {   /* a picture of the module, without a run */
    rc = graph_write(ctx, m, &o, NULL);
    goto out;
  }
  int R, P;
  devices_grid(m, &o, &R, &P);
  if (o.reduce) rc = reduce_run(ctx, m, &o, argv[0]);
  else if (o.determinism && (o.reference || o.nref_bind || o.ref_f64))
    rc = die_usage("%s", "--determinism cannot be used with --reference");
  else if (o.ref_f64 && (o.reference || o.nref_bind))
    rc = die_usage("%s", "--reference-precision f64 compares the module with itself: it cannot be "
                   "used with --reference or --reference-custom-call");
  else if (o.determinism) rc = determinism_run(ctx, m, &o);
  else if (o.reference || o.nref_bind || o.ref_f64) rc = reference_run(ctx, m, &o, R, P);
  else if (devices_wanted(ctx, m, &o, R, P)) rc = devices_run(ctx, m, &o, R, P);
  else rc = run_module(ctx, m, &o);
  flush_diags(ctx);
out:
  hlo_module_free(m);
  hlo_module_free(whole);
  hlo_ctx_free(ctx);
  opts_free(&o);
  for (int i = 0; i < 4; i++) free(owned[i]);
  free(rargv);
  case_free(&rc_case);
  return rc;
}

/* graph.c: --graph FILE, the module as a Graphviz picture.
 *
 * One node per instruction (its name, opcode and shape; a custom call's
 * target and binding), one cluster per computation, an edge from each
 * operand to its user and a dashed edge from a calling instruction to the
 * computation it calls. With --stats the node also shows the time the run
 * spent in it (self time: the computations it calls are counted in their
 * own nodes) and its share of the run, and is coloured by that share.
 * --graph-filter NAME[:DEPTH] keeps the instructions within DEPTH operand or
 * user steps of NAME; --graph-collapse draws each fusion as one node and
 * leaves its body out.
 *
 * FILE.dot (or .gv) is written directly; FILE.svg and FILE.png go through
 * Graphviz's dot command. Uses only the public API (hlorun.h); the times
 * come from the --stats observer (debug.c). */
#include "cli/cli.h"
#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- Times per instruction (filled by the --stats observer) ---- */

typedef struct TimeSlot {
  const HloInstruction *ins;  /* borrowed; NULL = empty slot */
  uint64_t ns;                /* self time summed over its executions */
  int64_t count;              /* executions */
  int fused;                  /* how it ended a fused chain (HloEvent.fused), or 0 */
} TimeSlot;

struct GraphTimes {
  TimeSlot *slots;            /* open addressing, power-of-two capacity */
  size_t cap, n;
  uint64_t total_ns;          /* sum of every self time: the shares' base */
};

GraphTimes *graph_times_new(void) {
  GraphTimes *t = calloc(1, sizeof *t);
  if (t && !(t->slots = calloc(t->cap = 256, sizeof *t->slots))) { free(t); t = NULL; }
  return t;
}

void graph_times_free(GraphTimes *t) {
  if (!t) return;
  free(t->slots);
  free(t);
}

static size_t slot_of(const TimeSlot *slots, size_t cap, const HloInstruction *i) {
  size_t h = ((uintptr_t)i >> 4) * 0x9E3779B97F4A7C15ull;
  for (size_t k = h & (cap - 1);; k = (k + 1) & (cap - 1))
    if (slots[k].ins == i || !slots[k].ins) return k;
}

void graph_times_add(GraphTimes *t, const HloInstruction *i, uint64_t ns, int fused) {
  if (!t || !i) return;
  if (2 * (t->n + 1) > t->cap) {   /* grow at half full */
    TimeSlot *s = calloc(2 * t->cap, sizeof *s);
    if (!s) return;                /* the picture just lacks this time */
    for (size_t k = 0; k < t->cap; k++)
      if (t->slots[k].ins) s[slot_of(s, 2 * t->cap, t->slots[k].ins)] = t->slots[k];
    free(t->slots);
    t->slots = s;
    t->cap *= 2;
  }
  TimeSlot *s = &t->slots[slot_of(t->slots, t->cap, i)];
  if (!s->ins) { s->ins = i; t->n++; }
  s->ns += ns;
  s->count++;
  if (fused > s->fused) s->fused = fused;
  t->total_ns += ns;
}

static const TimeSlot *time_of(const GraphTimes *t, const HloInstruction *i) {
  if (!t) return NULL;
  const TimeSlot *s = &t->slots[slot_of(t->slots, t->cap, i)];
  return s->ins ? s : NULL;
}

/* ---- Which instructions to draw ---- */

typedef struct Graph {
  HloCtx *ctx;
  const HloModule *m;
  const GraphTimes *times;
  bool collapse;              /* fusions as single nodes */
  int ncomps;
  int *first;                 /* per computation: index of its first instruction */
  int total;                  /* instructions in the module */
  const HloInstruction **all; /* every instruction, computation by computation */
  bool *keep;                 /* per instruction: drawn */
  struct ByAddress { const HloInstruction *ins; int n; } *by_address;  /* sorted */
} Graph;

static int cmp_address(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const struct ByAddress *)a)->ins;
  uintptr_t y = (uintptr_t)((const struct ByAddress *)b)->ins;
  return x < y ? -1 : x > y;
}

/* Instruction number of i (an operand), -1 if it is not in the module. */
static int index_of(const Graph *g, const HloInstruction *i) {
  struct ByAddress key = {i, 0};
  const struct ByAddress *hit = bsearch(&key, g->by_address, (size_t)g->total, sizeof key,
                                        cmp_address);
  return hit ? hit->n : -1;
}

static int comp_index(const Graph *g, const char *name) {
  for (int c = 0; c < g->ncomps; c++)
    if (name && strcmp(hlo_module_computation_name(g->m, c), name) == 0) return c;
  return -1;
}

/* The computation holding instruction number n. */
static int comp_of(const Graph *g, int n) {
  int c = 0;
  while (c + 1 < g->ncomps && g->first[c + 1] <= n) c++;
  return c;
}

/* --graph-filter NAME[:DEPTH]: breadth-first over operand and user edges
 * (users are found by scanning the computation: modules are small enough
 * for a picture anyway). */
static int apply_filter(Graph *g, const char *spec) {
  char *name = xprintf("%s", spec);
  int depth = 2;
  char *colon = strrchr(name, ':');
  if (colon) {
    char *end;
    long d = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || d < 0 || d > 1000000) {
      fprintf(stderr, "%s: --graph-filter: bad depth '%s' (NAME[:DEPTH], DEPTH >= 0)\n", prog,
              colon + 1);
      free(name);
      return EXIT_ERROR;
    }
    depth = (int)d;
    *colon = 0;
  }
  const HloInstruction *start = hlo_module_find_instruction(g->m, name);
  if (!start) {
    fprintf(stderr, "%s: error: --graph-filter: the module has no instruction named '%s'\n",
            prog, name);
    free(name);
    return EXIT_ERROR;
  }
  free(name);
  int *dist = malloc((size_t)g->total * sizeof *dist), *queue = xmalloc((size_t)g->total * sizeof *queue);
  if (!dist) { free(queue); fprintf(stderr, "%s: out of memory\n", prog); return EXIT_ERROR; }
  for (int n = 0; n < g->total; n++) { dist[n] = -1; g->keep[n] = false; }
  int head = 0, tail = 0, s = index_of(g, start);
  dist[s] = 0;
  queue[tail++] = s;
  while (head < tail) {
    int n = queue[head++];
    g->keep[n] = true;
    if (dist[n] == depth) continue;
    const HloInstruction *i = g->all[n];
    int c = comp_of(g, n);
    for (int k = 0; k < hlo_module_computation_size(g->m, c); k++) {
      int u = g->first[c] + k;
      bool linked = false;
      for (int j = 0; j < hlo_instruction_num_operands(g->all[u]); j++)
        if (hlo_instruction_operand(g->all[u], j) == i) linked = true;
      for (int j = 0; j < hlo_instruction_num_operands(i); j++)
        if (hlo_instruction_operand(i, j) == g->all[u]) linked = true;
      if (linked && dist[u] < 0) { dist[u] = dist[n] + 1; queue[tail++] = u; }
    }
  }
  free(dist);
  free(queue);
  return EXIT_OK;
}

/* ---- DOT text ---- */

/* A DOT string's contents: quotes and backslashes escaped. */
static void put_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if (*s == '\n') { fputs("\\n", f); continue; }
    fputc(*s, f);
  }
}

/* Fill colour by share of the run: white (none) through orange to red.
 * The square root spreads the small shares, which are most of them. */
static void put_colour(FILE *f, double share) {
  double s = share <= 0 ? 0 : share >= 1 ? 1 : share;
  double sat = s > 0 ? 0.12 + 0.88 * __builtin_sqrt(s) : 0;
  fprintf(f, ", fillcolor=\"%.3f %.3f 1.000\"", 0.11 * (1 - s), sat);
}

/* A duration the way people read it: 850 ns, 12.3 us, 4.56 ms. */
static void put_duration(FILE *f, uint64_t ns) {
  if (ns < 1000) fprintf(f, "%llu ns", (unsigned long long)ns);
  else if (ns < 1000000) fprintf(f, "%.3g us", (double)ns / 1e3);
  else fprintf(f, "%.4g ms", (double)ns / 1e6);
}

/* The time drawn on i's node: its own, plus its body's when a collapsed
 * fusion stands for it (body >= 0). false when none was measured. */
static bool node_time(const Graph *g, const HloInstruction *i, int body, TimeSlot *out) {
  const TimeSlot *own = time_of(g->times, i);
  bool any = own != NULL;
  if (own) *out = *own;
  for (int k = 0; body >= 0 && k < hlo_module_computation_size(g->m, body); k++) {
    const TimeSlot *t = time_of(g->times, hlo_module_instruction(g->m, body, k));
    if (!t) continue;
    out->ns += t->ns;
    if (t->fused > out->fused) out->fused = t->fused;
    if (!any) out->count = t->count;
    any = true;
  }
  return any;
}

static void put_node(FILE *f, const Graph *g, int n) {
  const HloInstruction *i = g->all[n];
  char shape[96];
  size_t len = hlo_instruction_shape_text(i, shape, sizeof shape);
  if (len >= sizeof shape) memcpy(shape + sizeof shape - 4, "...", 4);
  fprintf(f, "    n%d [label=\"", n);
  put_escaped(f, hlo_instruction_name(i));
  fputs("\\n", f);
  put_escaped(f, hlo_instruction_opcode(i));
  fputc(' ', f);
  put_escaped(f, shape);
  const char *target = hlo_instruction_custom_call_target(i);
  if (target) {
    char *binding = hlo_ctx_custom_call_binding(g->ctx, target);
    fputs("\\ntarget: ", f);
    put_escaped(f, target);
    fputs("\\nbinding: ", f);
    put_escaped(f, binding ? binding : "NOT BOUND");
    hlo_free(binding);
  }
  int body = -1;
  if (g->collapse && strcmp(hlo_instruction_opcode(i), "fusion") == 0 &&
      (body = comp_index(g, hlo_instruction_called(i, 0))) >= 0)
    fprintf(f, "\\n(fused: %d instructions)", hlo_module_computation_size(g->m, body));
  TimeSlot t = {0};
  bool timed = node_time(g, i, body, &t);
  double share = timed && g->times->total_ns ? (double)t.ns / (double)g->times->total_ns : 0;
  if (timed) {
    fputs("\\n", f);
    put_duration(f, t.ns);
    fprintf(f, " (%.1f%%)", 100.0 * share);
    if (t.count > 1) fprintf(f, " in %lld runs", (long long)t.count);
    if (t.fused) fputs(body >= 0 ? "\\nincludes fused elementwise chains"
                                 : t.fused == 2 ? "\\nends a fused dot chain"
                                 : "\\nends a fused elementwise chain", f);
  } else if (g->times) {
    fputs("\\nno time of its own\\n(fused into a chain, or not run)", f);
  }
  fputc('"', f);
  if (g->times) put_colour(f, share);
  if (target) fputs(", shape=component", f);
  if (hlo_instruction_is_root(i)) fputs(", penwidth=2", f);
  fprintf(f, ", tooltip=\"line %d\"];\n", hlo_instruction_line(i));
}

static bool comp_drawn(const Graph *g, int c) {
  if (g->collapse && (hlo_module_computation_flags(g->m, c) & HLO_COMPUTATION_FUSION)) return false;
  for (int k = 0; k < hlo_module_computation_size(g->m, c); k++)
    if (g->keep[g->first[c] + k]) return true;
  return false;
}

/* A node of the called computation that an edge can point at: its root
 * when drawn, else any drawn node. -1 if none. */
static int anchor_of(const Graph *g, int c) {
  if (!comp_drawn(g, c)) return -1;
  int any = -1;
  for (int k = 0; k < hlo_module_computation_size(g->m, c); k++) {
    int n = g->first[c] + k;
    if (!g->keep[n]) continue;
    if (hlo_instruction_is_root(g->all[n])) return n;
    any = n;
  }
  return any;
}

static void put_dot(FILE *f, const Graph *g) {
  fputs("digraph hlo {\n"
        "  graph [compound=true, rankdir=TB, fontname=\"Helvetica\", fontsize=11];\n"
        "  node [shape=box, style=\"rounded,filled\", fillcolor=\"white\", "
        "fontname=\"Helvetica\", fontsize=10];\n"
        "  edge [color=\"gray35\", arrowsize=0.6];\n", f);
  for (int c = 0; c < g->ncomps; c++) {
    if (!comp_drawn(g, c)) continue;
    unsigned flags = hlo_module_computation_flags(g->m, c);
    fprintf(f, "  subgraph cluster_%d {\n    label=\"%s", c,
            flags & HLO_COMPUTATION_ENTRY ? "ENTRY " : flags & HLO_COMPUTATION_FUSION ? "fusion " : "");
    put_escaped(f, hlo_module_computation_name(g->m, c));
    fprintf(f, "\";\n    style=\"rounded,filled\"; color=\"gray60\"; fillcolor=\"%s\";\n",
            flags & HLO_COMPUTATION_ENTRY ? "gray97" : flags & HLO_COMPUTATION_FUSION ? "aliceblue"
                                                                                  : "ivory");
    for (int k = 0; k < hlo_module_computation_size(g->m, c); k++)
      if (g->keep[g->first[c] + k]) put_node(f, g, g->first[c] + k);
    fputs("  }\n", f);
  }
  for (int n = 0; n < g->total; n++) {
    if (!g->keep[n] || !comp_drawn(g, comp_of(g, n))) continue;
    const HloInstruction *i = g->all[n];
    for (int j = 0; j < hlo_instruction_num_operands(i); j++) {
      int o = index_of(g, hlo_instruction_operand(i, j));
      if (o >= 0 && g->keep[o]) fprintf(f, "  n%d -> n%d;\n", o, n);
    }
    for (int j = 0; j < hlo_instruction_num_called(i); j++) {
      int c = comp_index(g, hlo_instruction_called(i, j));
      int a = c >= 0 ? anchor_of(g, c) : -1;
      if (a >= 0)
        fprintf(f, "  n%d -> n%d [style=dashed, color=\"steelblue\", lhead=cluster_%d];\n", n, a, c);
    }
  }
  fputs("}\n", f);
}

/* ---- Writing ---- */

/* Run `dot -TFORMAT -o out in`; 0 on success, else prints why. */
static int run_dot(const char *format, const char *in, const char *out) {
  char *fmt = xprintf("-T%s", format);
  char *argv[] = {"dot", fmt, "-o", (char *)out, (char *)in, NULL};
  pid_t pid;
  int rc = posix_spawnp(&pid, "dot", NULL, NULL, argv, environ), status = 0;
  free(fmt);
  if (rc == ENOENT) {
    fprintf(stderr, "%s: error: --graph %s: Graphviz's 'dot' is not installed (Debian package "
            "'graphviz'); write a .dot file instead\n", prog, out);
    return -1;
  }
  if (rc != 0) {
    fprintf(stderr, "%s: error: --graph %s: cannot start dot: %s\n", prog, out, strerror(rc));
    return -1;
  }
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "%s: error: --graph %s: dot failed (status %d)\n", prog, out, status);
    return -1;
  }
  return 0;
}

static int write_file(const Graph *g, const char *path) {
  const char *format = has_suffix(path, ".svg") ? "svg" : has_suffix(path, ".png") ? "png" : NULL;
  if (!format && !has_suffix(path, ".dot") && !has_suffix(path, ".gv")) {
    fprintf(stderr, "%s: error: --graph %s: unknown picture format (use .dot, .gv, .svg or .png)\n",
            prog, path);
    return EXIT_ERROR;
  }
  /* .svg/.png: the DOT text goes to a temporary file beside nothing of the
   * user's, and dot writes the picture. */
  char *dot_path = format ? xprintf("%s/hlorun-graph-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp")
                          : xprintf("%s", path);
  FILE *f = NULL;
  if (format) {
    int fd = mkstemp(dot_path);
    f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f && fd >= 0) close(fd);
  } else {
    f = fopen(dot_path, "w");
  }
  if (!f) {
    fprintf(stderr, "%s: error: --graph %s: %s\n", prog, format ? dot_path : path, strerror(errno));
    free(dot_path);
    return EXIT_ERROR;
  }
  put_dot(f, g);
  int rc = ferror(f) | fclose(f) ? EXIT_ERROR : EXIT_OK;
  if (rc != EXIT_OK) fprintf(stderr, "%s: error: --graph %s: write failed\n", prog, path);
  if (rc == EXIT_OK && format && run_dot(format, dot_path, path) != 0) rc = EXIT_ERROR;
  if (format) unlink(dot_path);
  free(dot_path);
  return rc;
}

int graph_write(HloCtx *ctx, const HloModule *m, const Opts *o, const GraphTimes *times) {
  Graph g = {.ctx = ctx, .m = m, .times = times, .collapse = o->graph_collapse,
             .ncomps = hlo_module_num_computations(m)};
  g.first = xmalloc((size_t)(g.ncomps + 1) * sizeof *g.first);
  for (int c = 0; c < g.ncomps; c++) {
    g.first[c] = g.total;
    g.total += hlo_module_computation_size(m, c);
  }
  g.first[g.ncomps] = g.total;
  g.all = xmalloc((size_t)(g.total + 1) * sizeof *g.all);
  g.keep = xmalloc((size_t)(g.total + 1) * sizeof *g.keep);
  g.by_address = xmalloc((size_t)(g.total + 1) * sizeof *g.by_address);
  for (int c = 0; c < g.ncomps; c++)
    for (int k = 0; k < hlo_module_computation_size(m, c); k++) {
      int n = g.first[c] + k;
      g.all[n] = hlo_module_instruction(m, c, k);
      g.keep[n] = true;
      g.by_address[n] = (struct ByAddress){g.all[n], n};
    }
  qsort(g.by_address, (size_t)g.total, sizeof *g.by_address, cmp_address);
  int rc = o->graph_filter ? apply_filter(&g, o->graph_filter) : EXIT_OK;
  if (rc == EXIT_OK) rc = write_file(&g, o->graph);
  free(g.first);
  free(g.all);
  free(g.keep);
  free(g.by_address);
  return rc;
}

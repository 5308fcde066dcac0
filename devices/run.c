/* run.c: compiling and running a module on a grid of devices (the public
 * hlo_compile, hlo_execute_devices and friends of include/hlorun.h).
 *
 * Every device of this process gets its own executable (plans, value
 * caches and diagnostics are per executor), all sharing the context's
 * thread pool, custom-call registry and memory limit. A run starts one
 * thread per device; each runs ENTRY on its own inputs and leaves the
 * communicator when done, so that nobody waits for it any longer. Errors
 * of the devices are reported with their device number; a device that
 * failed only because another one did is left out of the report.
 * Under MPI (mpi.c) this process runs a contiguous block of the devices
 * and rank 0 gathers every device's result. */
#include "devices/devices.h"
#include "devices/mpi.h"
#include "interp/api.h"
#include "interp/plan.h"
#include "ir/collective.h"
#include "ffi/ffi.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct HldRun HldRun;
struct HldRun {
  HloCtx *ctx;
  const HloModule *m;
  int64_t R, P, ndev, first, nlocal;
  HloExecutable **exes;      /* [nlocal]; exes[0] is the front executable (not owned) */
  HliDevice *devs;           /* [nlocal] */
  HlcDiags *diags;           /* [nlocal] */
  HliMemShare share;
  HldComm *comm;
};

static void run_free(HldRun *r) {
  if (!r) return;
  for (int64_t i = 1; i < r->nlocal && r->exes; i++) hlo_executable_free(r->exes[i]);
  for (int64_t i = 0; i < r->nlocal && r->diags; i++) hlc_diags_clear(&r->diags[i]);
  hld_comm_free(r->comm);
  free(r->exes);
  free(r->devs);
  free(r->diags);
  free(r);
}

static void run_free_owner(void *r) { run_free(r); }

/* The run of e when it runs on several devices, else NULL. */
static HldRun *run_of(const HloExecutable *e) { return e ? e->owner : NULL; }

void hlo_module_device_grid(const HloModule *m, int *replicas, int *partitions, int *inferred) {
  int64_t R = m ? m->replica_count : 1, P = m ? m->num_partitions : 1;
  bool header = false;
  for (int32_t a = 0; m && a < m->nattrs; a++)
    header |= strcmp(m->attrs[a].name, "replica_count") == 0 ||
              strcmp(m->attrs[a].name, "num_partitions") == 0;
  int inf = 0;
  if (m && !header) {
    int64_t r, p;
    hlp_devices_needed(m, &r, &p);
    if (r * p > 1) { R = r; P = p; inf = 1; }
  }
  if (replicas) *replicas = (int)R;
  if (partitions) *partitions = (int)P;
  if (inferred) *inferred = inf;
}

int hlo_module_is_device_dependent(const HloModule *m) {
  return m && hlp_module_is_device_dependent(m, NULL);
}

HloStatus hlo_compile(HloCtx *ctx, const HloModule *m, const HloRunOptions *opts,
                      HloExecutable **out) {
  if (!ctx || !m || !out) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  HloRunOptions o = {.struct_size = sizeof o};
  if (opts) memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
  int R, P;
  hlo_module_device_grid(m, &R, &P, NULL);
  if (o.replicas < 0 || o.partitions < 0)
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "negative replica or partition count");
  if (o.replicas) R = o.replicas;
  if (o.partitions) P = o.partitions;
  int64_t ndev = (int64_t)R * P;
  if (ndev > 4096)
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "%d replicas x %d partitions is more than "
                        "the 4096 devices hlorun runs", R, P);
  if (ndev == 1) return hli_compile_device(ctx, m, &o, NULL, out);

  HldRun *r = calloc(1, sizeof *r);
  if (!r) return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  r->ctx = ctx;
  r->m = m;
  r->R = R;
  r->P = P;
  r->ndev = ndev;
  int nproc = hld_mpi_size(), rank = hld_mpi_rank();
  if (nproc > ndev) {
    free(r);
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "%d MPI processes for %lld devices: run at most "
                        "one process per device", nproc, (long long)ndev);
  }
  /* Contiguous blocks, the first ndev % nproc ranks one device larger. */
  int64_t base = ndev / nproc, extra = ndev % nproc;
  r->first = rank * base + (rank < extra ? rank : extra);
  r->nlocal = base + (rank < extra);
  r->exes = calloc((size_t)r->nlocal, sizeof *r->exes);
  r->devs = calloc((size_t)r->nlocal, sizeof *r->devs);
  r->diags = calloc((size_t)r->nlocal, sizeof *r->diags);
  r->comm = hld_comm_new(ndev, r->first, r->nlocal, hld_mpi_remote());
  if (!r->exes || !r->devs || !r->diags || !r->comm) {
    run_free(r);
    return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  }
  r->share.limit = ctx->max_memory;
  for (int64_t i = 0; i < r->nlocal; i++) {
    int64_t d = r->first + i;
    r->devs[i] = (HliDevice){d / P, d % P, R, P, hld_comm_iface(r->comm)};
    r->diags[i].max_errors = ctx->diags.max_errors;
    HloStatus st = hli_compile_device(ctx, m, &o, &r->devs[i], &r->exes[i]);
    if (st != HLO_OK) {
      if (i == 0) run_free(r);
      else hlo_executable_free(r->exes[0]);   /* frees r too */
      return st;
    }
    r->exes[i]->x.mem_share = &r->share;
    if (i == 0) {   /* the front executable owns the run from now on */
      r->exes[0]->owner = r;
      r->exes[0]->owner_free = run_free_owner;
    }
  }
  *out = r->exes[0];
  return HLO_OK;
}

int hlo_executable_num_devices(const HloExecutable *e) {
  return !e ? 0 : run_of(e) ? (int)run_of(e)->ndev : 1;
}

void hlo_executable_local_devices(const HloExecutable *e, int *first, int *count) {
  HldRun *r = run_of(e);
  *first = r ? (int)r->first : 0;
  *count = r ? (int)r->nlocal : e ? 1 : 0;
}

int hlo_process_count(void) { return hld_mpi_size(); }
int hlo_process_rank(void) { return hld_mpi_rank(); }

/* ---- running ------------------------------------------------------------------ */

typedef struct Job {
  HldRun *r;
  int64_t i;                 /* local index */
  HliValue **args;
  HliValue *res;
  int rc;
  pthread_t th;
  bool started;
} Job;

static void *device_main(void *arg) {
  Job *j = arg;
  HloExecutable *e = j->r->exes[j->i];
  hlf_set_thread_device((int32_t)(j->r->first + j->i));   /* XLA_FFI_DeviceOrdinal_Get */
  e->x.err_kind = HLI_ERR_RUNTIME;
  j->rc = hli_plan_run(&e->x, e->entry, j->args, &j->res);
  hld_comm_depart(j->r->comm, j->r->first + j->i, j->rc != 0);
  return NULL;
}

/* Add a device's diagnostic to the context's, "error: " followed by
 * "device N: ". */
static void merge_diag(HlcDiags *to, const HlcDiag *dg, int64_t d) {
  if (to->n == to->cap) {
    int cap = to->cap ? 2 * to->cap : 8;
    HlcDiag *v = realloc(to->v, (size_t)cap * sizeof *v);
    if (!v) return;
    to->v = v;
    to->cap = cap;
  }
  const char *t = dg->text, *at = strstr(t, "error: ");
  if (!at) at = strstr(t, "warning: ");
  size_t head = at ? (size_t)(strchr(at, ' ') + 1 - t) : 0;
  char *text = NULL, *msg = NULL;
  if (asprintf(&text, "%.*sdevice %lld: %s", (int)head, t, (long long)d, t + head) < 0) text = NULL;
  if (asprintf(&msg, "device %lld: %s", (long long)d, dg->message ? dg->message : "") < 0) msg = NULL;
  if (!text || !msg) { free(text); free(msg); return; }
  to->v[to->n++] = (HlcDiag){dg->sev, dg->line, dg->col, text, msg};
  if (dg->sev == HLC_ERROR) to->nerrors++;
  if (dg->sev == HLC_WARNING) to->nwarnings++;
}

static void report(HldRun *r, const Job *jobs) {
  bool primary = false;
  for (int64_t i = 0; i < r->nlocal; i++)
    primary |= jobs[i].rc != 0 && !hld_comm_secondary(r->comm, r->first + i);
  int shown = 0, hidden = 0;
  for (int64_t i = 0; i < r->nlocal; i++) {
    bool failed = jobs[i].rc != 0;
    bool show = !failed || (primary ? !hld_comm_secondary(r->comm, r->first + i) : shown == 0);
    for (int k = 0; k < r->diags[i].n; k++)
      if (show || r->diags[i].v[k].sev != HLC_ERROR) merge_diag(&r->ctx->diags, &r->diags[i].v[k], r->first + i);
    if (failed) { if (show) shown++; else hidden++; }
    hlc_diags_clear(&r->diags[i]);
  }
  if (hidden)
    hlc_diag(&r->ctx->diags, HLC_NOTE, "%d other device%s stopped because of %s", hidden,
             hidden == 1 ? "" : "s", shown == 1 ? "this error" : "these errors");
}

HloStatus hlo_execute_devices(HloExecutable *e, HloBuffer *const *inputs, int n,
                              HloBuffer **results) {
  if (!e || !results || (n > 0 && !inputs)) return HLO_INVALID_ARGUMENT;
  HloCtx *ctx = e->ctx;
  HldRun *r = run_of(e);
  if (!r) {   /* one device */
    results[0] = NULL;
    return hlo_execute(e, inputs, n, results);
  }
  for (int64_t d = 0; d < r->ndev; d++) results[d] = NULL;
  Job *jobs = calloc((size_t)r->nlocal, sizeof *jobs);
  HliValue **args = calloc((size_t)(r->nlocal * (n ? n : 1)), sizeof *args);
  if (!jobs || !args) {
    free(jobs);
    free(args);
    return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  }
  HloStatus st = HLO_OK;
  for (int64_t i = 0; i < r->nlocal && st == HLO_OK; i++) {
    jobs[i] = (Job){r, i, args + i * n, NULL, 0, 0, false};
    st = hli_entry_args(ctx, r->m, inputs + (r->first + i) * n, n, jobs[i].args);
    if (st != HLO_OK)
      hlc_diag(&ctx->diags, HLC_NOTE, "(the inputs of device %lld)", (long long)(r->first + i));
  }
  if (st != HLO_OK) {
    free(jobs);
    free(args);
    return st;
  }
  hld_comm_reset(r->comm);
  atomic_store(&r->share.used, 0);
  double deadline = e->timeout > 0 ? hli_now() + e->timeout : 0;
  for (int64_t i = 0; i < r->nlocal; i++) {
    HloExecutable *x = r->exes[i];
    if (i > 0 && hli_obs_copy(x, e) != HLO_OK) st = HLO_NOMEM;
    hli_obs_reset(x->obs);
    x->x.diags = &r->diags[i];
    x->x.deadline = deadline;
    x->x.cur = NULL;
    x->x.mem_used = 0;
  }
  hld_mpi_set_devices(r->ndev);
  hld_mpi_run_begin();
  for (int64_t i = 0; i < r->nlocal && st == HLO_OK; i++) {
    if (pthread_create(&jobs[i].th, NULL, device_main, &jobs[i]) != 0) {
      jobs[i].rc = -1;
      hlc_diag(&r->diags[i], HLC_ERROR, "cannot start the thread of device %lld",
               (long long)(r->first + i));
      hld_comm_depart(r->comm, r->first + i, true);
    } else {
      jobs[i].started = true;
    }
  }
  hld_mpi_progress_until_done(r->comm);
  bool failed = false, stopped = false;
  for (int64_t i = 0; i < r->nlocal; i++) {
    if (jobs[i].started) pthread_join(jobs[i].th, NULL);
    failed |= jobs[i].rc != 0;
    stopped |= hli_obs_stopped(r->exes[i]->obs);
  }
  /* The status of the first device that failed first-hand (else of the
   * first that failed). */
  int64_t cause = -1;
  for (int64_t i = 0; i < r->nlocal; i++)
    if (jobs[i].rc != 0 && (cause < 0 || (hld_comm_secondary(r->comm, r->first + cause) &&
                                          !hld_comm_secondary(r->comm, r->first + i))))
      cause = i;
  HloStatus why = cause >= 0 ? hli_exec_status(&r->exes[cause]->x) : HLO_RUNTIME_ERROR;
  report(r, jobs);
  if (hld_mpi_remote_failed()) {   /* every rank then skips the gathering below */
    if (!failed)
      hlc_diag(&ctx->diags, HLC_ERROR, "devices of another MPI process failed (its errors "
               "say why), so this process's results (devices %lld to %lld) are not used",
               (long long)r->first, (long long)(r->first + r->nlocal - 1));
    failed = true;
  }
  size_t peak = atomic_load(&r->share.peak);
  if (peak > e->x.mem_peak) e->x.mem_peak = peak;
  for (int64_t i = 0; i < r->nlocal; i++) {
    r->exes[i]->x.diags = &ctx->diags;
    r->exes[i]->x.mem_share = &r->share;
    if (jobs[i].res && !failed) {
      if (hli_make_buffer(ctx, jobs[i].res, &r->m->entry->root->shape, &results[r->first + i]) != HLO_OK)
        failed = true;
    } else if (jobs[i].res) {
      hli_value_unref(NULL, jobs[i].res);
    }
  }
  if (!failed && hld_mpi_gather_results(ctx, r->m, r->ndev, r->first, r->nlocal, results) != 0)
    failed = true;
  free(jobs);
  free(args);
  if (!failed) return HLO_OK;
  for (int64_t d = 0; d < r->ndev; d++) { hlo_buffer_free(results[d]); results[d] = NULL; }
  return stopped ? HLO_STOPPED : why;
}

HloStatus hlo_execute(HloExecutable *e, HloBuffer *const *inputs, int n, HloBuffer **result) {
  if (!e || !result || (n > 0 && !inputs)) return HLO_INVALID_ARGUMENT;
  *result = NULL;
  if (run_of(e))
    return hli_api_fail(e->ctx, HLO_INVALID_ARGUMENT, "the module runs on %d devices: run it "
                        "with hlo_execute_devices", hlo_executable_num_devices(e));
  HliValue *stack_args[16] = {0};
  HliValue **args = n <= 16 ? stack_args : malloc((size_t)n * sizeof *args);
  if (!args) return hli_api_fail(e->ctx, HLO_NOMEM, "out of memory");
  HloStatus st = hli_entry_args(e->ctx, e->m, inputs, n, args);
  if (st == HLO_OK) st = hli_execute_args(e, args, result);
  if (args != stack_args) free(args);
  return st;
}

HloStatus hlo_run(HloCtx *ctx, const HloModule *m, HloBuffer *const *inputs, int n,
                  HloBuffer **result) {
  HloExecutable *e;
  HloStatus st = hlo_compile(ctx, m, NULL, &e);
  if (st != HLO_OK) return st;
  st = hlo_execute(e, inputs, n, result);
  hlo_executable_free(e);
  return st;
}

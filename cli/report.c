/* report.c: --report FILE, the machine-readable form of --reference,
 * --passes and --determinism (schema: doc/divergence.md, "Reports as
 * JSON"). The commands build a jansson object as they go (only when asked)
 * and hand it here to be written; this file knows the shared pieces (the
 * header, a first divergence) and how to write the file whole or not at
 * all. */
#include "cli/cli.h"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

json_t *report_new(const Opts *o, const char *mode) {
  if (!o->report) return NULL;
  json_t *r = json_object();
  json_object_set_new(r, "schema", json_string("hlorun-report/1"));
  json_object_set_new(r, "mode", json_string(mode));
  return r;
}

/* -1 stays -1 in the library's structs; JSON says null for "not in a loop". */
static json_t *count_or_null(int64_t v) { return v >= 0 ? json_integer(v) : json_null(); }

static json_t *text_or_null(const char *s) { return s ? json_string(s) : json_null(); }

json_t *report_instruction(const HloInstruction *i, int64_t iteration, int64_t call) {
  json_t *j = json_object();
  json_object_set_new(j, "instruction", json_string(hlo_instruction_name(i)));
  json_object_set_new(j, "opcode", json_string(hlo_instruction_opcode(i)));
  json_object_set_new(j, "computation", json_string(hlo_instruction_computation(i)));
  json_object_set_new(j, "line", json_integer(hlo_instruction_line(i)));
  json_object_set_new(j, "iteration", count_or_null(iteration));
  json_object_set_new(j, "call", count_or_null(call));
  return j;
}

json_t *report_divergence(const HloDivergence *d, const char *reference) {
  if (!d->found) return json_null();
  json_t *j = report_instruction(d->instruction, d->iteration, d->call);
  json_t *cp = json_object();
  if (d->counterpart) {
    json_object_set_new(cp, "instruction", json_string(hlo_instruction_name(d->counterpart)));
    json_object_set_new(cp, "line", json_integer(hlo_instruction_line(d->counterpart)));
  }
  json_object_set_new(cp, "module", text_or_null(reference));
  json_object_set_new(j, "counterpart", cp);
  json_object_set_new(j, "mismatches", json_integer(d->mismatches));
  json_object_set_new(j, "elements", json_integer(d->elements));
  /* NaN (no differing element has a finite error) has no JSON number: null. */
  json_object_set_new(j, "max_abs_error",
                      isfinite(d->max_abs_error) ? json_real(d->max_abs_error) : json_null());
  json_object_set_new(j, "max_abs_at", text_or_null(d->max_abs_at));
  json_object_set_new(j, "device", json_integer(d->device));
  return j;
}

void report_comparison(json_t *r, const HloDivergence *d, const char *reference) {
  if (!r) return;
  json_t *res = json_object();
  json_object_set_new(res, "mismatches", json_integer(d->result_mismatches));
  json_object_set_new(res, "shapes_differ", json_boolean(d->result_mismatches < 0));
  json_object_set_new(r, "result", res);
  json_object_set_new(r, "first_divergence", report_divergence(d, reference));
  json_object_set_new(r, "line", text_or_null(d->line));
  json_object_set_new(r, "values_compared", json_integer(d->values_compared));
  json_object_set_new(r, "paired", json_integer(d->paired));
  json_object_set_new(r, "unpaired", json_integer(d->unpaired));
  json_object_set_new(r, "runs", json_integer(d->runs));
  json_object_set_new(r, "devices", json_integer(d->num_devices));
  json_object_set_new(r, "devices_diverged", json_integer(d->devices_diverged));
}

int report_finish(const Opts *o, json_t *r, int rc) {
  if (!r) return rc;
  static const char *const status[] = {"agree", "differ", "error"};
  json_object_set_new(r, "exit", json_integer(rc));
  json_object_set_new(r, "status", json_string(rc >= 0 && rc <= 2 ? status[rc] : "error"));
  /* Whole or not at all: a temporary file renamed over FILE. */
  char *tmp = xprintf("%s.tmp-%ld", o->report, (long)getpid());
  int wrote = json_dump_file(r, tmp, JSON_INDENT(2) | JSON_SORT_KEYS);
  json_decref(r);
  if (wrote != 0 || rename(tmp, o->report) != 0) {
    fprintf(stderr, "%s: error: --report: cannot write %s: %s\n", prog, o->report,
            errno ? strerror(errno) : "write failed");
    unlink(tmp);
    free(tmp);
    return EXIT_ERROR;
  }
  free(tmp);
  return rc;
}

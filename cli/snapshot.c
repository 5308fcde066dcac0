/* snapshot.c: --save-snapshot FILE, the run as a binary xla.HloSnapshot
 * (module, arguments, result) that hlorun and XLA's run_hlo_module replay.
 *
 * A run on several devices writes one snapshot per device, each with that
 * device's arguments and result: FILE with ".dD" before its extension
 * (run.pb -> run.d0.pb, run.d1.pb, ...). The module is the partitioned
 * module every device runs; a device's snapshot replays alone only when the
 * module reads nothing of the other devices (no collective).
 *
 * Not here: encoding (hlo_snapshot_encode in the library). */
#include "cli.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* FILE, or FILE with ".dD" before its extension. */
static char *device_path(const char *file, int device, int ndev) {
  if (ndev <= 1) return xprintf("%s", file);
  const char *slash = strrchr(file, '/'), *dot = strrchr(file, '.');
  if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : file))
    return xprintf("%s.d%d", file, device);
  return xprintf("%.*s.d%d%s", (int)(dot - file), file, device, dot);
}

int snapshot_save(HloCtx *ctx, const HloModule *m, const Opts *o, HloBuffer *const *in,
                  HloBuffer *const *res, int ndev) {
  if (!o->save_snapshot) return EXIT_OK;
  int np = hlo_module_num_params(m);
  for (int d = 0; d < ndev; d++) {
    if (!res[d]) continue;   /* a device of another process */
    void *bytes = NULL;
    size_t len = 0;
    if (hlo_snapshot_encode(ctx, m, in + (size_t)d * (size_t)np, np, res[d], &bytes, &len) != HLO_OK)
      return fail_with(ctx, "--save-snapshot");
    char *path = device_path(o->save_snapshot, d, ndev);
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(bytes, 1, len, f) == len;
    int err = errno;
    ok = f && fclose(f) == 0 && ok;
    hlo_free(bytes);
    if (!ok) {
      fprintf(stderr, "%s: error: --save-snapshot: cannot write %s: %s\n", prog, path, strerror(err));
      free(path);
      return EXIT_ERROR;
    }
    free(path);
  }
  return EXIT_OK;
}

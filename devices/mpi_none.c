/* mpi_none.c: the MPI side of the runtime in a build without MPI (mpi.h):
 * one process runs every device. */
#include "devices/mpi.h"

int hld_mpi_size(void) { return 1; }
int hld_mpi_rank(void) { return 0; }
HldRemote *hld_mpi_remote(void) { return NULL; }
void hld_mpi_run_begin(void) {}
void hld_mpi_progress_until_done(HldComm *c) { (void)c; }
int hld_mpi_gather_results(HloCtx *ctx, const HloModule *m, int64_t ndev, int64_t first,
                           int64_t nlocal, HloBuffer **results) {
  (void)ctx; (void)m; (void)ndev; (void)first; (void)nlocal; (void)results;
  return 0;
}
void hld_mpi_set_devices(int64_t ndev) { (void)ndev; }
bool hld_mpi_remote_failed(void) { return false; }

/* mpi.h: the MPI side of the multi-device runtime (mpi.c; mpi_none.c when
 * hlorun is built without MPI). A process started by mpirun runs one
 * contiguous block of the devices; the others run on the other ranks. */
#ifndef HLORUN_DEVICES_MPI_H
#define HLORUN_DEVICES_MPI_H
#include "hlorun.h"
#include "devices/devices.h"

/* Processes of the job and this one's rank (1 and 0 outside mpirun). */
int hld_mpi_size(void);
int hld_mpi_rank(void);
/* The transport to the other processes' devices; NULL with one process. */
HldRemote *hld_mpi_remote(void);
/* Around a run: the calling thread serves MPI (the only thread that calls
 * it) until this process's devices have all left the communicator and
 * every rank has finished the run. */
void hld_mpi_run_begin(void);
void hld_mpi_progress_until_done(HldComm *c);
/* The grid's device count (before a run: which rank runs which device). */
void hld_mpi_set_devices(int64_t ndev);
/* After hld_mpi_progress_until_done: did another rank's devices fail? */
bool hld_mpi_remote_failed(void);
/* Send every local device's result to rank 0, which fills results[d] for
 * every device. 0, or -1 with an error on ctx. */
int hld_mpi_gather_results(HloCtx *ctx, const HloModule *m, int64_t ndev, int64_t first,
                           int64_t nlocal, HloBuffer **results);
#endif

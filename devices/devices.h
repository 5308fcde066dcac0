/* devices.h: the multi-device runtime (internal to devices/).
 *
 * A module on R replicas x P partitions runs one executor per device. The
 * devices of one process are threads sharing the kernel thread pool; with
 * MPI the grid is split into contiguous blocks of devices, one per rank.
 * Every device meets the others through one communicator (HldComm, which
 * implements interp/comm.h): a rendezvous table for the devices of this
 * process, and, under MPI, a transport to the other processes' devices
 * (mpi.c) behind the HldRemote interface.
 *
 * Nothing can hang silently: a device that finishes or fails while others
 * wait for it at a collective fails those collectives at once, naming the
 * instruction and the devices that arrived and did not; when every device
 * of the process waits and none can go on, that is a deadlock and every
 * waiting collective fails with the same report; a run's --timeout ends
 * waits too. */
#ifndef HLORUN_DEVICES_DEVICES_H
#define HLORUN_DEVICES_DEVICES_H
#include <stdbool.h>
#include <stdint.h>
#include "interp/comm.h"
#include "interp/exec.h"

typedef struct HldComm HldComm;
typedef struct HldRemote HldRemote;

/* What the communicator needs of the other processes (MPI). Called with
 * the communicator's lock released. */
struct HldRemote {
  /* Leader of a collective on this process: send the local members' pieces
   * to every process holding other members, receive theirs; recv[r] gets
   * member r's leaves for every member not on this process (malloc'd
   * buffers the communicator frees). 0 or -1 with *why (malloc'd). */
  int (*exchange)(HldRemote *rm, const HloInstr *ins, uint64_t seq, const int64_t *devs, int n,
                  const HliPiece *const *local, int nleaves, HliPiece **recv, char **why);
  /* Send leaves for device `to` (on another process). */
  int (*send)(HldRemote *rm, int64_t channel, int64_t from, int64_t to, uint64_t seq,
              const HliPiece *leaves, int nleaves, char **why);
  /* Receive what device `from` (on another process) sent to `to`. */
  int (*recv)(HldRemote *rm, int64_t channel, int64_t from, int64_t to, uint64_t seq,
              const HliPiece *dst, int nleaves, char **why);
  /* This process's devices have all finished (failed: one of them failed). */
  void (*depart)(HldRemote *rm, bool failed);
};

/* A communicator for devices [first, first + nlocal) of a grid of ndev;
 * remote NULL when every device is local. */
HldComm *hld_comm_new(int64_t ndev, int64_t first, int64_t nlocal, HldRemote *remote);
void hld_comm_free(HldComm *c);
/* The interface the kernels call (interp/comm.h). */
HliComm *hld_comm_iface(HldComm *c);
/* Forget the previous run (sequence numbers, undelivered sends). */
void hld_comm_reset(HldComm *c);
/* Local device d finished its program (failed: with an error). Waiters for
 * it fail now instead of waiting. */
void hld_comm_depart(HldComm *c, int64_t d, bool failed);
/* Did device d's run fail only because another device failed or left
 * (its error is a consequence, not a cause)? */
bool hld_comm_secondary(HldComm *c, int64_t d);
#endif

/* devices.h: the multi-device runtime (internal to devices/).
 *
 * A module on R replicas x P partitions runs one executor per device. The
 * devices of one process are threads sharing the kernel thread pool; with
 * MPI the grid is split into contiguous blocks of devices, one per rank.
 * Every device meets the others through one communicator (HldComm, which
 * implements interp/comm.h): a rendezvous table for the devices of this
 * process, and, under MPI, a transport to the other processes' devices
 * (mpi.c) behind the HldRemote interface, over which an all-reduce runs
 * as a running fold from process to process (chain.c).
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
#include "interp/interp.h"

typedef struct HldComm HldComm;
typedef struct HldRemote HldRemote;
typedef struct HldXfer HldXfer;

/* What the communicator needs of the other processes (MPI). Called with
 * the communicator's lock released. */
struct HldRemote {
  /* Leader of a collective on this process: send the local members' pieces
   * to every process holding other members, receive theirs; recv[r] gets
   * member r's leaves for every member not on this process that a local
   * member reads (hints; buffers from hli_buffer_alloc the communicator
   * frees), and only those are sent where they are read. deadline: the run's (monotonic
   * seconds; 0 none). 0 or -1 with *why (malloc'd). */
  int (*exchange)(HldRemote *rm, const HloInstr *ins, uint64_t seq, const int64_t *devs, int n,
                  const HliPiece *const *local, int nleaves, HliPiece **recv,
                  const HliHints *hints, double deadline, char **why);
  /* Send leaves for device `to` (on another process). */
  int (*send)(HldRemote *rm, int64_t channel, int64_t from, int64_t to, uint64_t seq,
              const HliPiece *leaves, int nleaves, char **why);
  /* Receive what device `from` (on another process) sent to `to`. */
  int (*recv)(HldRemote *rm, int64_t channel, int64_t from, int64_t to, uint64_t seq,
              const HliPiece *dst, int nleaves, double deadline, char **why);
  /* This process's devices have all finished (failed: one of them failed). */
  void (*depart)(HldRemote *rm, bool failed);
  /* The process (MPI rank) that runs device d. */
  int (*process_of)(HldRemote *rm, int64_t d);
  /* One message of a collective's pipeline (an all-reduce's running fold),
   * keyed by (instruction, execution count, first member, part, from, to):
   * post a send of nbytes at data to device `to`'s process, or a receive
   * into data of what device `from`'s process sends to `to`. Neither
   * waits; the memory must stay until wait returns. NULL with *why. */
  HldXfer *(*post_send)(HldRemote *rm, const HloInstr *ins, uint64_t seq, int64_t first,
                        int64_t part, int64_t from, int64_t to, const void *data, size_t nbytes,
                        char **why);
  HldXfer *(*post_recv)(HldRemote *rm, const HloInstr *ins, uint64_t seq, int64_t first,
                        int64_t part, int64_t from, int64_t to, void *data, size_t nbytes,
                        char **why);
  /* Wait for a posted message (deadline as exchange's) and free t. */
  int (*wait)(HldRemote *rm, HldXfer *t, double deadline, char **why);
};

/* An all-reduce whose members span processes, run as a running fold
 * (chain.c) by each local member on its share of the work, once every
 * local member has arrived. */
typedef struct HldChain {
  HldRemote *rm;
  HliExec *x;                     /* this member's executor (errors) */
  const HloInstr *ins;
  uint64_t seq;                   /* execution count: the messages' key */
  const int64_t *devs;            /* members in rank order */
  int n, self;                    /* self: this member's rank */
  const HliPiece *const *pieces;  /* [n]: local members' operand leaves (remote ones: NULL) */
  const HliPiece *const *outs;    /* [n]: local members' result leaves (remote ones: NULL) */
  int nleaves;
  const HliFold *fold;            /* this member's (its executor's scratch) */
  int part, nparts;               /* this member's share of the chunks */
  double deadline;
} HldChain;
/* 0, or -1 with *why (malloc'd). */
int hld_chain_all_reduce(const HldChain *ch, char **why);

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

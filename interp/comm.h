/* comm.h: what the collective kernels see of the other devices of a
 * multi-device run (a module with replica_count x num_partitions > 1).
 *
 * The interpreter runs one device per executor (HliExec). The runtime above
 * interp/ (devices/) starts one executor per device and gives each an
 * HliDevice: its coordinates and the communicator that joins it to the
 * others. The communicator is an interface with two transports behind it
 * (threads of one process, and MPI between processes); kernels never know
 * which one runs.
 *
 * Collectives exchange raw values and every device folds what it received
 * itself, in the group's rank order, so a result never depends on timing,
 * on the transport or on the thread count. */
#ifndef HLORUN_INTERP_COMM_H
#define HLORUN_INTERP_COMM_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "interp/interp.h"

/* One array leaf of a device's contribution. */
typedef struct HliPiece {
  const void *data;
  size_t nbytes;
} HliPiece;

/* How the members that run in one process share the work of a
 * collective whose members all compute the same result (all-reduce): the
 * member with share `part` of `nparts` computes that part of the result and
 * writes it into every outs[r] that is not NULL (the members of this
 * process; r in rank order). The parts are disjoint and the exchange
 * returns only after every member has consumed, so each result is whole
 * when its device goes on. With outs NULL each member computes all of its
 * own result. */
typedef struct HliShare {
  int part, nparts;
  const HliPiece *const *outs;
} HliShare;

/* Called on every member once all members of the group have arrived:
 * pieces[r] holds member r's nleaves leaves (r in rank order). It reads
 * them (never writes) and computes this device's result, or its share of
 * every member's (share). 0 or -1 (an error recorded on the executor). */
typedef int (*HliConsume)(void *arg, const HliPiece *const *pieces, const HliShare *share);

/* The fold of an all-reduce, for a transport that carries running folds
 * between processes instead of every member's operands (each process then
 * sends one accumulator onward instead of all its members' operands). Per
 * leaf and element, in rank order: acc = begin(x0); acc = step(acc, xr)
 * for r = 1, 2, ...; result = end(acc): consume's fold exactly, so the bits
 * do not depend on where the members run. The accumulator holds
 * acc_size(leaf) bytes per element (f32 for bf16 and f16, else the element
 * type's size elem_size(leaf)); end may run in place when the sizes agree.
 * The pointers address the first of count elements. 0 or -1 (an error
 * recorded on the executor). */
typedef struct HliFold {
  void *arg;
  size_t (*elem_size)(void *arg, int leaf);
  size_t (*acc_size)(void *arg, int leaf);
  int (*begin)(void *arg, int leaf, void *acc, const void *src, int64_t count);
  int (*step)(void *arg, int leaf, void *acc, const void *src, int64_t count);
  int (*end)(void *arg, int leaf, void *dst, const void *acc, int64_t count);
} HliFold;

/* What a transport may use to move less between processes (each NULL:
 * nothing). fold: an all-reduce's (with out), see HliFold. reads: does
 * member `reader` read member `member`'s leaves (NULL: every member reads
 * every member's)? A property of the instruction, the same answer on every
 * device; consume then never looks at the leaves of a member no local
 * member reads (they may be missing). */
typedef struct HliHints {
  const HliFold *fold;
  bool (*reads)(const HloInstr *ins, int reader, int member);
} HliHints;

typedef struct HliComm HliComm;
struct HliComm {
  /* Device devs[rank] (this executor's device) arrives at instruction ins
   * with the group devs[0..n) (flattened device ids in rank order) and its
   * leaves mine[0..nleaves). consume runs on the calling thread when every
   * member has arrived; the call returns after every member has consumed,
   * so mine may be released then. The k-th execution of ins on one device
   * meets the k-th on the others. 0, or -1 with an error recorded on x that
   * names ins and the devices that did and did not arrive. out: this
   * member's result leaves, to share the work (HliShare), or NULL. hints
   * (or NULL): with an all-reduce's fold a transport may fill every
   * member's out itself, folding in rank order, and skip consume. */
  int (*exchange)(HliComm *c, HliExec *x, const HloInstr *ins, const int64_t *devs, int n,
                  int rank, const HliPiece *mine, int nleaves, const HliPiece *out,
                  HliConsume consume, void *arg, const HliHints *hints);
  /* Point to point (send/recv): post a copy of the leaves for device `to`
   * on channel; it does not wait for the receiver. */
  int (*send)(HliComm *c, HliExec *x, const HloInstr *ins, int64_t channel, int64_t to,
              const HliPiece *leaves, int nleaves);
  /* Wait for what device `from` sent on channel and copy it into dst
   * (nleaves leaves of the given sizes, which must agree with the sender's). */
  int (*recv)(HliComm *c, HliExec *x, const HloInstr *ins, int64_t channel, int64_t from,
              const HliPiece *dst, int nleaves);
  /* How many times this device ran ins before (counting this call): the
   * loop iteration a send or recv in a while body is in. */
  uint64_t (*executions)(HliComm *c, HliExec *x, const HloInstr *ins);
};

/* The memory limit the devices of one process share (exec.h). */
typedef struct HliMemShare {
  _Atomic size_t used, peak;
  size_t limit;                     /* 0 = none */
} HliMemShare;

/* The device an executor runs. */
typedef struct HliDevice {
  int64_t replica, partition;       /* this device */
  int64_t nreplicas, npartitions;   /* the grid; device id = replica * npartitions + partition */
  HliComm *comm;                    /* borrowed */
} HliDevice;
#endif

#!/usr/bin/python3
"""gen_devices.py: writes tests/devices/xla/<case>/, multi-device golden cases.

Each case is a module of XLA's collective tests (xla/tests/collective_ops_test.cc
and collective_ops_e2e_test.cc, openxla/xla), its HLO text as in the test with
the test's replica count (and partition count) moved into the module header, its
inputs (in0.npy ...) and expected.npz holding every device's result as d0, d1,
... (dN_arr_K for the leaves of a tuple result). The expected values are the
test's own expected literals, or, where the test computes them (iota inputs,
sums over devices), computed here with numpy from the test's computation.
A few cases marked "hlorun's own" cover what those tests do not (partitions,
channel_id, use_global_device_ids, iota replica_groups); their values follow
XLA's documented semantics (operation_semantics.md), worked out here.
Run with /usr/bin/python3 (numpy); regenerating gives the same bytes.
"""
import os
import sys
import textwrap
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gcase import write_npy, f32_to_bf16_bits  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'devices', 'xla')
OPS_TEST = 'xla/tests/collective_ops_test.cc'
E2E_TEST = 'xla/tests/collective_ops_e2e_test.cc'
CASES = []


def case(name, source, replicas, hlo, expected, inputs=(), partitions=1):
    """expected: one (type, array) per device, or one list of them (a tuple) per device.
    inputs: (type, array) given whole to every device, or (type, [array per device])."""
    assert len(expected) == replicas * partitions, name
    CASES.append((name, source, replicas, partitions, hlo, list(inputs), expected))


def header(hlo, replicas, partitions):
    """The test passes the counts in its HloModuleConfig; here they go in the header."""
    lines = hlo.strip('\n').split('\n')
    first = next(i for i, l in enumerate(lines) if l.strip().startswith('HloModule'))
    extra = ', replica_count=%d' % replicas
    if partitions > 1:
        extra += ', num_partitions=%d' % partitions
    lines[first] = lines[first].rstrip() + extra
    return textwrap.dedent('\n'.join(lines[first:])) + '\n'


def npy_bytes(arr, et):
    tmp = os.path.join(ROOT, '.tmp.npy')
    write_npy(tmp, arr, et)
    with open(tmp, 'rb') as f:
        data = f.read()
    os.unlink(tmp)
    return data


def write_named_npz(path, leaves):
    """leaves: (key, array, element type); fixed timestamps keep the bytes stable."""
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_STORED) as z:
        for key, a, et in leaves:
            z.writestr(zipfile.ZipInfo(key + '.npy', date_time=(1980, 1, 1, 0, 0, 0)), npy_bytes(a, et))


def emit(name, source, replicas, partitions, hlo, inputs, expected):
    d = os.path.join(ROOT, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    with open(os.path.join(d, 'module.hlo'), 'w') as f:
        f.write(header(hlo, replicas, partitions))
    ndev = replicas * partitions
    if any(isinstance(a, list) for _, a in inputs):  # --per-device-inputs takes only .npz
        inputs = [(et, a if isinstance(a, list) else [a] * ndev) for et, a in inputs]
    for i, (et, a) in enumerate(inputs):
        if isinstance(a, list):  # one value per device: in<i>.npz, --per-device-inputs
            write_named_npz(os.path.join(d, 'in%d.npz' % i), [('d%d' % k, v, et) for k, v in enumerate(a)])
        else:
            write_npy(os.path.join(d, 'in%d.npy' % i), a, et)
    leaves = []
    for dev, res in enumerate(expected):
        if isinstance(res, list):
            leaves += [('d%d_arr_%d' % (dev, k), a, et) for k, (et, a) in enumerate(res)]
        else:
            leaves.append(('d%d' % dev, res[1], res[0]))
    write_named_npz(os.path.join(d, 'expected.npz'), leaves)
    with open(os.path.join(d, 'README'), 'w') as f:
        f.write(source + '\n')


def u32(*v):
    return ('u32', np.array(v, np.uint32))


def u16(*v):
    return ('u16', np.array(v, np.uint16))


def same(n, res):
    return [res] * n


# ---- MakeCrsModule / TestTwoReplicasOneOperand / TestAllOpsForReduce ------

CRS = '''
  HloModule test

  apply_op {
    x = DATATYPE[] parameter(0)
    y = DATATYPE[] parameter(1)
    ROOT apply_op = DATATYPE[] OP(x, y)
  }

  ENTRY test_computation {
    p = SHAPE parameter(0)
    p2 = SHAPE reshape(p)
    crs = SHAPE all-reduce(p2), replica_groups=REPLICA_GROUPS, to_apply=apply_op
    copy = SHAPE copy(crs)
    ROOT out = SHAPE reshape(copy)
  }
'''


def crs_module(shape, groups, op='add', dtype='f32'):
    g = '{%s}' % ', '.join('{%s}' % ','.join(str(i) for i in grp) for grp in groups)
    return (CRS.replace('SHAPE', shape).replace('REPLICA_GROUPS', g)
            .replace('OP', op).replace('DATATYPE', dtype))


NPTYPE = {'s8': np.int8, 'u8': np.uint8, 'u32': np.uint32, 's32': np.int32, 's64': np.int64,
          'u64': np.uint64, 'f32': np.float32, 'f64': np.float64, 'f16': np.float16, 'pred': np.bool_}


def typed(et, vals):
    """bf16 values are stored as bit patterns (all of these are exact in bf16)."""
    if et == 'bf16':
        return f32_to_bf16_bits(np.array(vals, np.float32))
    return np.array(vals, NPTYPE[et])


def two_replicas(name, test, et, op, inp, want, shape=None):
    shape = shape or '%s[%d]' % (et, len(inp))
    case(name, '%s (%s); op %s, input %s' % (test, OPS_TEST, op, inp), 2,
         crs_module(shape, [], op, et), same(2, (et, typed(et, want))),
         inputs=[(et, typed(et, inp))])


# TestAllOpsForReduce: input {1,2,3} on both replicas: add {2,4,6},
# multiply {1,4,9}, maximum and minimum {1,2,3}; signed types again with
# {-1,-2,-3}: add {-2,-4,-6}, multiply {1,4,9}, maximum, minimum {-1,-2,-3}.
ALL_OPS = {'s8': 'int8', 'u8': 'uint8', 'u32': 'uint32', 's32': 'int32', 's64': 'int64',
           'u64': 'uint64', 'f32': 'float32', 'f64': 'double', 'f16': 'half', 'bf16': 'bfloat16'}
SIGNED = {'s8', 's32', 's64', 'f32', 'f64', 'f16', 'bf16'}
# Every type with add; the other operations on a few types, to keep the
# suite short under mpirun (each run there costs about two seconds).
EVERY_OP = {'s8', 'u64', 'f16', 'bf16'}
for et, tname in ALL_OPS.items():
    test = 'AllReduceTwoReplicasOneOperand_' + tname
    for op, want in (('add', [2, 4, 6]), ('multiply', [1, 4, 9]),
                     ('maximum', [1, 2, 3]), ('minimum', [1, 2, 3])):
        if op == 'add' or et in EVERY_OP:
            two_replicas('all_reduce_%s_%s' % (op, et), test, et, op, [1, 2, 3], want)
    if et in SIGNED and et in EVERY_OP:
        for op, want in (('add', [-2, -4, -6]), ('multiply', [1, 4, 9]),
                         ('maximum', [-1, -2, -3]), ('minimum', [-1, -2, -3])):
            two_replicas('all_reduce_%s_%s_negative' % (op, et), test, et, op, [-1, -2, -3], want)

two_replicas('all_reduce_sum_float32_2d', 'AllReduce_sum_float32_2D', 'f32', 'add',
             [[1, 2], [3, 4]], [[2, 4], [6, 8]], shape='f32[2,2]')
two_replicas('all_reduce_single_output_float32', 'AllReduceSingleOutput_float32', 'f32',
             'add', [1], [2])
two_replicas('all_reduce_and_pred_equal', 'AllReduceAnd_Pred', 'pred', 'and',
             [True, False], [True, False])
two_replicas('all_reduce_or_pred_equal', 'AllReduceOr_Pred', 'pred', 'or',
             [True, False], [True, False])

PRED_BY_ID = '''
    HloModule test

    apply_op {
      x = pred[] parameter(0)
      y = pred[] parameter(1)
      ROOT apply_op = pred[] OP(x, y)
    }

    ENTRY test_computation {
      id = u32[] replica-id()
      c = u32[] constant(0)
      p = pred[] compare(id, c), direction=EQ
      p2 = pred[1] reshape(p)
      crs = pred[1] all-reduce(p2), replica_groups={}, to_apply=apply_op
      copy = pred[1] copy(crs)
      ROOT out = pred[1] reshape(copy)
    }
'''
# Replica 0 holds true, replica 1 false: and -> false, or -> true.
case('all_reduce_and_pred', 'AllReduceAnd_Pred (%s), second module' % OPS_TEST, 2,
     PRED_BY_ID.replace('OP', 'and'), same(2, ('pred', np.array([False]))))
case('all_reduce_or_pred', 'AllReduceOr_Pred (%s), second module' % OPS_TEST, 2,
     PRED_BY_ID.replace('OP', 'or'), same(2, ('pred', np.array([True]))))

# AllReduce_AllCombinations asserts only that the run succeeds; on 3 devices
# each gets 3 * iota(1024) (exact in f32).
iota1024 = np.arange(1024, dtype=np.float32)
case('all_reduce_all_combinations_3', 'AllReduce_AllCombinations (%s), the 3-device subset; '
     'values: 3 x iota(1024), from the documented sum' % OPS_TEST, 3,
     crs_module('f32[1024]', []), same(3, ('f32', 3 * iota1024)), inputs=[('f32', iota1024)])

iota137 = np.arange(137, dtype=np.float32)
case('all_reduce_three_replica_groups', 'AllReduce_ThreeReplicaGroups (%s)' % OPS_TEST, 4,
     crs_module('f32[137]', [[0], [1, 2], [3]]),
     [('f32', iota137), ('f32', 2 * iota137), ('f32', 2 * iota137), ('f32', iota137)],
     inputs=[('f32', iota137)])

case('all_reduce_combinable_all_reduces', 'AllReduce_CombinableAllReduces (%s)' % OPS_TEST, 2, '''
    HloModule test

    apply_op {
      x = f32[] parameter(0)
      y = f32[] parameter(1)
      ROOT apply_op = f32[] add(x, y)
    }

    ENTRY test_computation {
      p0 = f32[5] parameter(0)
      p1 = f32[5] parameter(1)
      crs0 = f32[5] all-reduce(p0), replica_groups={}, to_apply=apply_op
      crs1 = f32[5] all-reduce(p1), replica_groups={}, to_apply=apply_op
      ROOT out = (f32[5], f32[5]) tuple(f32[5] crs0, f32[5] crs1)
    }
''', same(2, [('f32', np.array([2, 4, 6, 8, 10], np.float32)),
              ('f32', np.array([14, 6, 8, 2, 4], np.float32))]),
     inputs=[('f32', np.array([1, 2, 3, 4, 5], np.float32)),
             ('f32', np.array([7, 3, 4, 1, 2], np.float32))])

case('all_reduce_tuple_all_reduce', 'AllReduce_TupleAllReduce (%s)' % OPS_TEST, 2, '''
    HloModule test

    apply_op {
      x = f32[] parameter(0)
      y = f32[] parameter(1)
      ROOT apply_op = f32[] add(x, y)
    }

    ENTRY test_computation {
      p0 = f32[5] parameter(0)
      p1 = f32[7] parameter(1)
      ROOT out = (f32[5], f32[7]) all-reduce(p0, p1), replica_groups={}, to_apply=apply_op
    }
''', same(2, [('f32', np.array([2, 4, 6, 8, 10], np.float32)),
              ('f32', np.array([14, 6, 8, 2, 4, 6, 8], np.float32))]),
     inputs=[('f32', np.array([1, 2, 3, 4, 5], np.float32)),
             ('f32', np.array([7, 3, 4, 1, 2, 3, 4], np.float32))])

case('all_reduce_degenerate', 'AllReduce_Degenerate (%s)' % OPS_TEST, 4, '''
      HloModule test

      apply_op {
        x = u32[] parameter(0)
        y = u32[] parameter(1)
        ROOT apply_op = u32[] add(x, y)
      }

      ENTRY test_computation {
        id = u32[] replica-id()
        ROOT crs = u32[] all-reduce(id), replica_groups={{0},{1},{2},{3}}, to_apply=apply_op
      }
''', [('u32', np.uint32(i)) for i in range(4)])

ASYNC_AR = '''
      HloModule test

      apply_op {
        x = u32[] parameter(0)
        y = u32[] parameter(1)
        ROOT apply_op = u32[] add(x, y)
      }

      ENTRY test_computation {
        id = u32[] replica-id()
        BODY
      }
'''
# On 4 devices: sum [0,4) = 6, sum of squares = 14.
case('async_all_reduce', 'AsyncAllReduce (%s), on 4 devices' % OPS_TEST, 4, ASYNC_AR.replace('BODY', '''start = u32[] all-reduce-start(id), to_apply=apply_op, backend_config="{\\"is_sync\\":false}"
        ROOT done = u32[] all-reduce-done(start)'''), same(4, ('u32', np.uint32(6))))
case('async_all_reduce_two_operands', 'AsyncAllReduceTwoOperands (%s), on 4 devices' % OPS_TEST, 4,
     ASYNC_AR.replace('BODY', '''id2 = u32[] multiply(id, id)
        start = (u32[], u32[]) all-reduce-start(id, id2), to_apply=apply_op, backend_config="{\\"is_sync\\":false}"
        ROOT done = (u32[], u32[]) all-reduce-done(start)'''),
     same(4, [('u32', np.uint32(6)), ('u32', np.uint32(14))]))

case('replica_id', 'ReplicaId (%s), on 4 devices' % OPS_TEST, 4, '''
  HloModule test
  ENTRY test_computation {
    id = u32[] replica-id()
    ROOT out = u32[] copy(id)
  }
''', [('u32', np.uint32(i)) for i in range(4)])

case('collective_broadcast_simple', 'CollectiveBroadcast_Simple (%s)' % OPS_TEST, 4, '''
  HloModule test

  collective_broadcast {
    p0 = u32[2] parameter(0)
    ROOT result = u32[2] collective-broadcast(p0), replica_groups={{1, 0, 2, 3}}
  }

  ENTRY test_computation {
    replica = u32[] replica-id()
    ten = u32[] constant(10)
    sum = u32[] add(replica, ten)
    p = u32[2] broadcast(sum), dimensions={}
    cb = ((u32[2]), u32[2]) async-start(u32[2] %p), calls=collective_broadcast
    ROOT res = u32[2] async-done(cb), calls=collective_broadcast
  }
''', same(4, u32(11, 11)))

case('collective_broadcast_sync', 'AsyncCollectiveBroadcast (%s)' % E2E_TEST, 2, '''
  HloModule test
  ENTRY test_computation {
    replica = u32[] replica-id()
    ten = u32[] constant(10)
    sum = u32[] add(replica, ten)
    p = u32[2] broadcast(sum), dimensions={}
    bcast = u32[2] collective-broadcast(p), replica_groups={{1, 0}}
    ROOT res = copy(bcast)
  }
''', same(2, u32(11, 11)))

PERMUTE = '''
  HloModule test
  ENTRY test_computation {
    replica = u32[] replica-id()
    ten = u32[] constant(10)
    sum = u32[] add(replica, ten)
    p = u32[2] broadcast(sum), dimensions={}
    permute = u32[2] collective-permute(p), source_target_pairs=PAIRS
    ROOT copy = u32[2] copy(permute)
  }
'''
for name, test, pairs, want in (
        ('collective_permute_simple', 'CollectivePermute_Simple', '{{1,0}, {0,1}, {2,2}}', (11, 10, 12, 0)),
        ('collective_permute_degenerate', 'CollectivePermute_Degenerate',
         '{{0,0}, {1,1}, {2,2}, {3,3}}', (10, 11, 12, 13)),
        ('collective_permute_not_degenerate', 'CollectivePermute_NotDegenerate',
         '{{0,0}, {1,1}, {2,2}}', (10, 11, 12, 0)),
        ('collective_permute_rotate', 'CollectivePermute_Rotate',
         '{{0,1}, {1,2}, {2,3}, {3,0}}', (13, 10, 11, 12))):
    case(name, '%s (%s)' % (test, OPS_TEST), 4, PERMUTE.replace('PAIRS', pairs),
         [u32(v, v) for v in want])

case('async_collective_permute', 'AsyncCollectivePermute (%s)' % OPS_TEST, 2, '''
      HloModule test

      ENTRY test_computation {
        replica = u32[] replica-id()
        ten = u32[] constant(10)
        sum = u32[] add(replica, ten)
        p = u32[2] broadcast(sum), dimensions={}
        start = (u32[2], u32[2]) collective-permute-start(p), source_target_pairs={{0,1}, {1,0}}, backend_config="{\\"is_sync\\":false}"
        ROOT done = u32[2] collective-permute-done(start)
      }
''', [u32(11, 11), u32(10, 10)])

A2A4 = '''
  HloModule test
  ENTRY test_computation {
    id = u32[] replica-id()
    id2 = u32[2] broadcast(id), dimensions={}
    a0 = u32[2] constant({10, 15})
    b0 = u32[2] constant({20, 25})
    c0 = u32[2] constant({30, 35})
    d0 = u32[2] constant({40, 45})
    a1 = u32[2] add(id2, a0)
    b1 = u32[2] add(id2, b0)
    c1 = u32[2] add(id2, c0)
    d1 = u32[2] add(id2, d0)
    all2all = (u32[2], u32[2], u32[2], u32[2]) all-to-all(a1, b1, c1, d1), replica_groups=GROUPS
    a_prime = u32[2] get-tuple-element(all2all), index=0
    b_prime = u32[2] get-tuple-element(all2all), index=1
    c_prime = u32[2] get-tuple-element(all2all), index=2
    d_prime = u32[2] get-tuple-element(all2all), index=3
    ROOT out = u32[8] concatenate(a_prime, b_prime, c_prime, d_prime), dimensions={0}
  }
'''
case('all_to_all_empty_replica_groups', 'AllToAll_EmptyReplicaGroups (%s)' % OPS_TEST, 4,
     A2A4.replace('GROUPS', '{}'),
     [u32(10, 15, 11, 16, 12, 17, 13, 18), u32(20, 25, 21, 26, 22, 27, 23, 28),
      u32(30, 35, 31, 36, 32, 37, 33, 38), u32(40, 45, 41, 46, 42, 47, 43, 48)])
case('all_to_all_ordered_replica_groups', 'AllToAll_OrderedReplicaGroups (%s)' % OPS_TEST, 4,
     A2A4.replace('GROUPS', '{{3,2,1,0}}'),
     [u32(43, 48, 42, 47, 41, 46, 40, 45), u32(33, 38, 32, 37, 31, 36, 30, 35),
      u32(23, 28, 22, 27, 21, 26, 20, 25), u32(13, 18, 12, 17, 11, 16, 10, 15)])
case('all_to_all_two_replica_groups', 'AllToAll_TwoReplicaGroups (%s)' % OPS_TEST, 4, '''
  HloModule test
  ENTRY test_computation {
    id = u32[] replica-id()
    id2 = u32[2] broadcast(id), dimensions={}
    a0 = u32[2] constant({10, 15})
    b0 = u32[2] constant({20, 25})
    a1 = u32[2] add(id2, a0)
    b1 = u32[2] add(id2, b0)
    all2all = (u32[2], u32[2]) all-to-all(a1, b1), replica_groups={{2,1},{3,0}}
    a_prime = u32[2] get-tuple-element(all2all), index=0
    b_prime = u32[2] get-tuple-element(all2all), index=1
    ROOT out = u32[4] concatenate(a_prime, b_prime), dimensions={0}
  }
''', [u32(23, 28, 20, 25), u32(22, 27, 21, 26), u32(12, 17, 11, 16), u32(13, 18, 10, 15)])
case('all_to_all_split_dimension', 'AllToAll_SplitDimension (%s)' % OPS_TEST, 4, '''
  HloModule test
  ENTRY test_computation {
    id = u32[] replica-id()
    id2 = u32[4, 2] broadcast(id), dimensions={}
    a0 = u32[4, 2] constant({{10, 15}, {20, 25}, {30, 35}, {40, 45}})
    a1 = u32[4, 2] add(id2, a0)
    all2all = u32[4, 2] all-to-all(a1), replica_groups={{0,1,2,3}}, dimensions={0}
    ROOT out = u32[8] reshape(all2all)
  }
''', [u32(10, 15, 11, 16, 12, 17, 13, 18), u32(20, 25, 21, 26, 22, 27, 23, 28),
      u32(30, 35, 31, 36, 32, 37, 33, 38), u32(40, 45, 41, 46, 42, 47, 43, 48)])
case('all_to_all_no_decomposition', 'NoAllToAllDecomposition (%s)' % E2E_TEST, 2, '''
  HloModule test
  ENTRY test_computation {
    id = u32[] replica-id()
    id2 = u32[2, 2] broadcast(id), dimensions={}
    a0 = u32[2, 2] constant({{10, 15}, {20, 25}})
    a1 = u32[2, 2] add(id2, a0)
    all2all = u32[2, 2] all-to-all(a1), replica_groups={{0,1}}, dimensions={0}
    ROOT out = u32[4] reshape(all2all)
  }
''', [u32(10, 15, 11, 16), u32(20, 25, 21, 26)])
case('all_to_all_without_split_dim', 'AsyncAllToAllWithoutSplitDim (%s)' % E2E_TEST, 2, '''
  HloModule test

  ENTRY test_computation {
    id = u32[] replica-id()
    id2 = u32[2] broadcast(id), dimensions={}
    a0 = u32[2] constant({10, 15})
    a1 = u32[2] add(id2, a0)
    a2 = u32[2] constant({4, 4})
    a3 = u32[2] multiply(a1, a2)
    a2a = (u32[2], u32[2]) all-to-all(u32[2] a1, u32[2] a3), replica_groups={{0,1}}
    gte0 = get-tuple-element(a2a), index=0
    gte1 = get-tuple-element(a2a), index=1
    ROOT x = u32[4] concatenate(gte0, gte1), dimensions={0}
  }
''', [u32(10, 15, 11, 16), u32(40, 60, 44, 64)])

AG = '''
  HloModule test
  ENTRY test_computation {
    id = u32[] replica-id()
    id2 = u32[SHAPE] broadcast(id), dimensions={}
    a0 = u32[SHAPE] constant(CONST)
    a1 = u32[SHAPE] add(id2, a0)
    allgather = u32[2, 2] all-gather(a1), ATTRS
    ROOT out = u32[4] reshape(allgather)
  }
'''


def all_gather(name, test, shape, const, attrs, want):
    hlo = AG.replace('SHAPE', shape).replace('CONST', const).replace('ATTRS', attrs)
    case(name, '%s (%s)' % (test, OPS_TEST), 2, hlo, same(2, u32(*want)))


all_gather('all_gather_dim0', 'AllGather_Dim0', '1, 2', '{{10, 15}}', 'dimensions={0}', (10, 15, 11, 16))
all_gather('all_gather_dim0_use_global_devices', 'AllGather_Dim0_UseGlobalDevices', '1, 2',
           '{{10, 15}}', 'dimensions={0}, use_global_device_ids=true, channel_id=7, replica_groups={{0, 1}}',
           (10, 15, 11, 16))
all_gather('all_gather_dim1', 'AllGather_Dim1', '2, 1', '{{10}, {15}}', 'dimensions={1}', (10, 11, 15, 16))

case('async_all_gather', 'AsyncAllGather (%s)' % OPS_TEST, 2, '''
  HloModule test
  ENTRY test_computation {
    id = u32[] replica-id()
    id2 = u32[1, 2] broadcast(id), dimensions={}
    a0 = u32[1, 2] constant({{10, 15}})
    a1 = u32[1, 2] add(id2, a0)
    ags = (u32[1, 2], u32[2, 2]) all-gather-start(a1), dimensions={0}, backend_config="{\\"is_sync\\":false}"
    allgather = u32[2,2] all-gather-done(ags)
    ROOT out = u32[4] reshape(allgather)
  }
''', same(2, u32(10, 15, 11, 16)))

case('all_gather_mixed_types', 'AllGatherMixedTypes (%s)' % OPS_TEST, 2, '''
  HloModule test
  ENTRY test_computation {
    id = u32[] replica-id()
    p0 = u32[2, 1] broadcast(id), dimensions={}
    p1 = f32[2, 1] convert(p0)
    allgather = (u32[2, 2], f32[2, 2]) all-gather(p0, p1), dimensions={1}
    ag0 = u32[2, 2] get-tuple-element(allgather), index=0
    ag1 = f32[2, 2] get-tuple-element(allgather), index=1
    r0 = u32[4] reshape(ag0)
    r1 = f32[4] reshape(ag1)
    ROOT out = (u32[4], f32[4]) tuple(r0, r1)
  }
''', same(2, [u32(0, 1, 0, 1), ('f32', np.array([0, 1, 0, 1], np.float32))]))

case('async_all_gather_mixed_types', 'AsyncAllGatherMixedTypes (%s)' % E2E_TEST, 2, '''
  HloModule test
  ENTRY test_computation {
    id = u32[] replica-id()
    id2 = u32[1, 2] broadcast(id), dimensions={}
    a0 = u32[1, 2] constant({{10, 15}})
    a1 = u32[1, 2] add(id2, a0)
    a2 = f32[1, 2] convert(a1)
    allgather = (u32[2, 2], f32[2,2]) all-gather(a1, a2), dimensions={0}
    gte0 = u32[2,2] get-tuple-element(allgather), index=0
    gte1 = f32[2,2] get-tuple-element(allgather), index=1
    out0 = u32[4] reshape(gte0)
    out1 = f32[4] reshape(gte1)
    ROOT out = (u32[4], f32[4]) tuple(out0, out1)
  }
''', same(2, [u32(10, 15, 11, 16), ('f32', np.array([10, 15, 11, 16], np.float32))]))

AG_REORDER = '''
  HloModule m

  ENTRY main {
    c0 = u32[2, 3] constant({{ 1,  2,  3}, { 4, 5, 6}})
    c1 = u32[2, 3] constant({{10, 11, 12}, {13, 14, 15}})
    zero = u32[] constant(0)
    id = u32[] replica-id()
    p = pred[] compare(id, zero), direction=EQ
    pb = pred[2, 3] broadcast(p), dimensions={}
    // data = c0 for replica 0 and c1 for replica 1
    data = u32[2, 3] select(pb, c0, c1)
    bc = u32[2, 4, 3] broadcast(data), dimensions={0, 2}
    ROOT ag = ROOT_AG
  }
'''
c0 = np.array([[1, 2, 3], [4, 5, 6]], np.uint32)
c1 = np.array([[10, 11, 12], [13, 14, 15]], np.uint32)
bc0, bc1 = (np.broadcast_to(c[:, None, :], (2, 4, 3)) for c in (c0, c1))
case('all_gather_broadcast_reorder_non_uniform', 'AllGatherBroadcastReorder_NonUniform (%s)' % OPS_TEST, 2,
     AG_REORDER.replace('ROOT_AG', 'u32[2, 4, 6] all-gather(bc), dimensions={2}, replica_groups={{0, 1}}'),
     same(2, ('u32', np.concatenate([bc0, bc1], axis=2))))
case('all_gather_broadcast_reorder_uniform', 'AllGatherBroadcastReorder_Uniform (%s)' % OPS_TEST, 2,
     AG_REORDER.replace('ROOT_AG', 'u32[2, 8, 3] all-gather(bc), dimensions={1}, replica_groups={{0, 1}}'),
     same(2, ('u32', np.concatenate([bc0, bc1], axis=1))))

case('all_gather_dim1_unit_dimensions', 'AllGather_Dim1UnitDimensions (%s)' % OPS_TEST, 2, '''
  HloModule test
  ENTRY test_computation {
    id = u32[] replica-id()
    id2 = u32[1, 1, 2, 1, 2] broadcast(id), dimensions={}
    offset = u32[4] iota(), iota_dimension=0
    offset_reshape = u32[1, 1, 2, 1, 2] reshape(offset)
    agi = u32[1, 1, 2, 1, 2] add(id2, offset_reshape)
    allgather = u32[1, 1, 4, 1, 2] all-gather(agi), dimensions={2}
    ROOT out = u32[8] reshape(allgather)
  }
''', same(2, u32(0, 1, 2, 3, 1, 2, 3, 4)))

RS = '''
  HloModule test
  add {
    lhs = u32[] parameter(0)
    rhs = u32[] parameter(1)
    ROOT add = u32[] add(lhs, rhs)
  }

  ENTRY main {
    c0 = u32[8] constant({1, 2, 3, 4, 5, 6, 7, 8})
    c1 = u32[8] constant({10, 11, 12, 13, 14, 15, 16, 17})
    zero = u32[] constant(0)
    id = u32[] replica-id()
    p = pred[] compare(id, zero), direction=EQ
    pb = pred[8] broadcast(p), dimensions={}
    // data = c0 for replica 0 and c1 for replica 1
    data = u32[8] select(pb, c0, c1)
    ROOT ars = u32[4] reduce-scatter(data), replica_groups={},
                      dimensions={0}, to_apply=add
  }
'''
case('reduce_scatter', 'ReduceScatter (%s)' % OPS_TEST, 2, RS, [u32(11, 13, 15, 17), u32(19, 21, 23, 25)])
case('async_reduce_scatter', 'AsyncReduceScatter (%s)' % OPS_TEST, 2, '''
  HloModule test
  add {
    lhs = u32[] parameter(0)
    rhs = u32[] parameter(1)
    ROOT add = u32[] add(lhs, rhs)
  }

  // XLA HLO does not have reduce-scatter-start/reduce-scatter-done op, but
  // uses the generic async-start/async-done ops.
  reduce_scatter {
    p0 = u32[8] parameter(0)
    ROOT result = u32[4] reduce-scatter(p0), replica_groups={},
                      dimensions={0}, to_apply=add
  }

  ENTRY main {
    c0 = u32[8] constant({1, 2, 3, 4, 5, 6, 7, 8})
    c1 = u32[8] constant({10, 11, 12, 13, 14, 15, 16, 17})
    zero = u32[] constant(0)
    id = u32[] replica-id()
    p = pred[] compare(id, zero), direction=EQ
    pb = pred[8] broadcast(p), dimensions={}
    // data = c0 for replica 0 and c1 for replica 1
    data = u32[8] select(pb, c0, c1)
    rs-start = ((u32[8]{0}), u32[4]{0}) async-start(u32[8]{0} %data), calls=reduce_scatter, backend_config="{\\"is_sync\\":false}"
    ROOT %ars = u32[4]{0} async-done(((u32[8]{0}), u32[4]{0}) %rs-start), calls=reduce_scatter
  }
''', [u32(11, 13, 15, 17), u32(19, 21, 23, 25)])

in16 = np.arange(1, 17, dtype=np.uint32)
case('reduce_scatter_constrain_layout', 'ReduceScatterConstrainLayout (%s)' % OPS_TEST, 2, '''
  HloModule reduce-scatter
    %sum (a: u32[], b: u32[]) -> u32[] {
    %a = u32[] parameter(0)
    %b = u32[] parameter(1)
    ROOT %add = u32[] add(u32[] a, u32[] b)
  }
  ENTRY main {
    %param = u32[16] parameter(0)
    ROOT %rs = u32[8] reduce-scatter(u32[16] %param), replica_groups={},
                       constrain_layout=true, to_apply=%sum, dimensions={0}
  }
''', [('u32', 2 * in16[:8]), ('u32', 2 * in16[8:])], inputs=[('u32', in16)])

case('reduce_scatter_dim1', 'ReduceScatter_Dim1 (%s)' % OPS_TEST, 2, '''
  HloModule test
  add {
    lhs = u32[] parameter(0)
    rhs = u32[] parameter(1)
    ROOT add = u32[] add(lhs, rhs)
  }

  ENTRY main {
    c0 = u32[2, 4] constant({{ 1,  2,  3,  4}, { 5,  6,  7,  8}})
    c1 = u32[2, 4] constant({{10, 11, 12, 13}, {14, 15, 16, 17}})
    zero = u32[] constant(0)
    id = u32[] replica-id()
    p = pred[] compare(id, zero), direction=EQ
    pb = pred[2, 4] broadcast(p), dimensions={}
    // data = c0 for replica 0 and c1 for replica 1
    data = u32[2, 4] select(pb, c0, c1)
    // all-reduce result = {{11, 13, 15, 17}, {19, 21, 23, 25}}
    ars = u32[2, 2] reduce-scatter(data), replica_groups={},
                    dimensions={1}, to_apply=add
    ROOT r = u32[4] reshape(ars)
  }
''', [u32(11, 13, 19, 21), u32(15, 17, 23, 25)])

REASSOC = '''
  HloModule m
  sum {
    a = ET[] parameter(0)
    b = ET[] parameter(1)
    ROOT add.2 = ET[] add(a, b)
  }

  ENTRY main {
    c0 = ET[8] constant({  1,  2,  3,  4,  5,  6,  7,  8})
    c1 = ET[8] constant({ 11, 12, 13, 14, 15, 16, 17, 18})
    c2 = ET[8] constant({  2,  3,  4,  5,  6,  7,  8,  9})
    c3 = ET[8] constant({ 12, 13, 14, 15, 16, 17, 18, 19})
    zero = u32[] constant(0)
    id = u32[] replica-id()
    p = pred[] compare(id, zero), direction=EQ
    pb = pred[8] broadcast(p), dimensions={}
    // data0 = c0 for replica 0 and c1 for replica 1
    data0 = ET[8] select(pb, c0, c1)
    // data1 = c2 for replica 0 and c3 for replica 1
    data1 = ET[8] select(pb, c2, c3)
BODY
  }
'''
case('reduce_scatter_reassociate', 'ReduceScatterReassociate (%s)' % OPS_TEST, 2,
     REASSOC.replace('ET', 'u32').replace('BODY', '''
    rs0 = u32[4] reduce-scatter(data0), replica_groups={}, dimensions={0}, to_apply=sum
    rs1 = u32[4] reduce-scatter(data1), replica_groups={}, dimensions={0}, to_apply=sum
    ROOT add = u32[4] add(rs0, rs1)'''), [u32(26, 30, 34, 38), u32(42, 46, 50, 54)])
case('reduce_scatter_reassociate_creator', 'ReduceScatterReassociate_ReduceScatterCreator (%s)' % OPS_TEST, 2,
     REASSOC.replace('ET', 'u32').replace('BODY', '''
    ar0 = u32[8] all-reduce(data0), replica_groups={}, to_apply=sum
    ar1 = u32[8] all-reduce(data1), replica_groups={}, to_apply=sum
    rid = u32[] replica-id()
    slice_size = u32[] constant(4)
    offset = u32[] multiply(rid, slice_size)
    ds0 = u32[4] dynamic-slice(ar0, offset), dynamic_slice_sizes={4}
    ds1 = u32[4] dynamic-slice(ar1, offset), dynamic_slice_sizes={4}
    ROOT add = u32[4] add(ds0, ds1)'''), [u32(26, 30, 34, 38), u32(42, 46, 50, 54)])
case('all_reduce_reassociate', 'AllReduceReassociate (%s)' % OPS_TEST, 2,
     REASSOC.replace('ET', 'f32').replace('BODY', '''
    ar0 = f32[8] all-reduce(data0), replica_groups={}, to_apply=sum
    ar1 = f32[8] all-reduce(data1), replica_groups={}, to_apply=sum
    ROOT add = f32[8] add(ar0, ar1)'''),
     same(2, ('f32', np.array([26, 30, 34, 38, 42, 46, 50, 54], np.float32))))

SIXTEEN = '''
  HloModule test

  sum {
    a = u16[] parameter(0)
    b = u16[] parameter(1)
    ROOT add.2 = u16[] add(a, b)
  }

  ENTRY test_computation {
    id32 = u32[] replica-id()
    id = u16[] convert(id32)
    id2 = u16[SHAPE] broadcast(id), dimensions={}
    a0 = u16[SHAPE] constant(CONST)
    a1 = u16[SHAPE] add(id2, a0)
ROOT
  }
'''


def sixteen(name, test, shape, const, root, want):
    hlo = SIXTEEN.replace('SHAPE', shape).replace('CONST', const).replace('ROOT\n', root + '\n')
    if 'to_apply' not in root:  # the tests without a reduction have no sum computation
        hlo = hlo[:hlo.index('  sum {')] + hlo[hlo.index('  ENTRY'):]
    case(name, '%s (%s)' % (test, OPS_TEST), 2, hlo, want)


sixteen('all_gather_16bit_int', 'AllGather_16BitInt', '1, 2', '{{10, 15}}', '''    allgather = u16[2, 2] all-gather(a1), dimensions={0}
    ROOT out = u16[4] reshape(allgather)''', same(2, u16(10, 15, 11, 16)))
sixteen('all_to_all_16bit_int', 'AllToAll_16BitInt', '2', '{10, 15}',
        '    ROOT a2a = u16[2] all-to-all(a1), dimensions={0}', [u16(10, 11), u16(15, 16)])
sixteen('collective_permute_16bit_int', 'CollectivePermute_16BitInt', '2', '{10, 15}',
        '    ROOT cp = u16[2] collective-permute(a1), source_target_pairs={{0,1}, {1,0}}',
        [u16(11, 16), u16(10, 15)])
sixteen('all_reduce_16bit_int', 'AllReduce_16BitInt', '2', '{10, 15}',
        '    ROOT cp = u16[2] all-reduce(a1), replica_groups={}, to_apply=sum', same(2, u16(21, 31)))
sixteen('reduce_scatter_16bit_int', 'ReduceScatter_16BitInt', '2', '{10, 15}',
        '    ROOT cp = u16[1]reduce-scatter(a1), dimensions={0}, replica_groups={}, to_apply=sum',
        [u16(21), u16(31)])

case('all_reduce_bfloat16_min', 'AllReduceBFloat16Min (%s)' % OPS_TEST, 2, '''
  HloModule test

  min {
    a = bf16[] parameter(0)
    b = bf16[] parameter(1)
    ROOT min.2 = bf16[] minimum(a, b)
  }

  ENTRY test_computation {
    id32 = u32[] replica-id()
    one = u32[] constant(1)
    id32_1 = u32[] add(id32, one)
    id = bf16[] convert(id32_1)
    id2 = bf16[2] broadcast(id), dimensions={}
    ROOT cp = bf16[2] all-reduce(id2), replica_groups={}, to_apply=min
  }
''', same(2, ('bf16', typed('bf16', [1, 1]))))

case('async_all_to_all', 'AsyncAllToAll (%s)' % OPS_TEST, 2, '''
  HloModule test

  all_to_all {
    p0 = u32[2] parameter(0)
    ROOT result = u32[2] all-to-all(p0), dimensions={0}
  }

  ENTRY test_computation {
    id = u32[] replica-id()
    id2 = u32[2] broadcast(id), dimensions={}
    a0 = u32[2] constant({10, 15})
    a1 = u32[2] add(id2, a0)
    a2a-start = ((u32[2]), u32[2]) async-start(u32[2] %a1), calls=all_to_all, backend_config="{\\"is_sync\\":false}"
    ROOT a2s = u32[2] async-done(a2a-start), calls=all_to_all
  }
''', [u32(10, 11), u32(15, 16)])

case('send_recv_simple', 'SendRecv_Simple (%s)' % OPS_TEST, 2, '''
  HloModule test
  ENTRY test_computation {
    %replica = u32[] replica-id()
    %ten = u32[] constant(10)
    %sum = u32[] add(%replica, %ten)
    %p = u32[2] broadcast(%sum), dimensions={}

    %after-all = token[] after-all()
    %recv = (u32[2], u32[], token[]) recv(%after-all), channel_id=0, frontend_attributes={
      _xla_send_recv_source_target_pairs="{{1,0}}"
    }
    %send = (u32[2], u32[], token[]) send(%p, %after-all), channel_id=0, control-predecessors={%recv}, frontend_attributes={
      _xla_send_recv_source_target_pairs="{{1,0}}"
    }

    %recv-done = (u32[2], token[]) recv-done(%recv), channel_id=0
    %recv-data = u32[2] get-tuple-element(%recv-done), index=0
    %send-done = token[] send-done(%send), channel_id=0, control-predecessors={%recv}
    ROOT copy = u32[2] copy(%recv-data)
  }
''', [u32(11, 11), u32(0, 0)])

case('send_recv_two_concurrent_chains', 'SendRecv_TwoConcurrentChains (%s)' % OPS_TEST, 2, '''
  HloModule test, is_scheduled=true

  ENTRY test_computation {
    c0 = u32[] constant(0)
    c1 = u32[] constant(1)
    replica = u32[] replica-id()
    a = u32[] add(c1, replica)
    send-data = u32[2] broadcast(a), dimensions={}

    after-all.0 = token[] after-all()
    recv.0 = (u32[2], u32[], token[]) recv(after-all.0), channel_id=0,
    frontend_attributes={
        _xla_send_recv_source_target_pairs="{{1,0}}",
        _xla_send_recv_pipeline="1"
      }
    send.0 = (u32[2], u32[], token[]) send(send-data, after-all.0),
      channel_id=0, frontend_attributes={
        _xla_send_recv_source_target_pairs="{{1,0}}",
        _xla_send_recv_pipeline="1"
      }

    after-all.1 = token[] after-all()
    recv.1 = (u32[2], u32[], token[]) recv(after-all.1), channel_id=0,
    frontend_attributes={
        _xla_send_recv_source_target_pairs="{{0,1}}"
      }
    send.1 = (u32[2], u32[], token[]) send(send-data, after-all.1),
      channel_id=0, frontend_attributes={
        _xla_send_recv_source_target_pairs="{{0,1}}"
      }

    recv-done.0 = (u32[2], token[]) recv-done(recv.0), channel_id=0,
    frontend_attributes={
        _xla_send_recv_pipeline="1"
      }
    recv-data.0 = u32[2] get-tuple-element(recv-done.0), index=0
    recv-done.1 = (u32[2], token[]) recv-done(recv.1), channel_id=0,
    frontend_attributes={
        _xla_send_recv_pipeline="0"
      }
    recv-data.1 = u32[2] get-tuple-element(recv-done.1), index=0

    compare0 = pred[] compare(replica, c0), direction=EQ
    compare = pred[2] broadcast(compare0), dimensions={}
    recv-data = u32[2] select(compare, recv-data.0, recv-data.1)

    send-done.0 = token[] send-done(send.0), channel_id=0,
    frontend_attributes={
        _xla_send_recv_pipeline="1"
      }
    send-done.1 = token[] send-done(send.1), channel_id=0,
    frontend_attributes={
        _xla_send_recv_pipeline="0"
      }
    c1b = u32[2] broadcast(c1), dimensions={}
    ROOT result = u32[2] add(c1b, recv-data)
  }
''', [u32(3, 3), u32(2, 2)])

case('send_recv_validation_attr2', 'SendRecv_ValidationAttr2 (%s)' % OPS_TEST, 2, '''
  HloModule test, is_scheduled=true
cond {
    param = (u32[], u32[2]) parameter(0)
    count = get-tuple-element(%param), index=0
    ub = u32[] constant(2)
    ROOT result = pred[] compare(count, ub), direction=LT
 }

body {
    param = (u32[], u32[2]) parameter(0)
    count = get-tuple-element(%param), index=0
    send-data = get-tuple-element(%param), index=1

    after-all.0 = token[] after-all()
    recv.0 = (u32[2], u32[], token[]) recv(after-all.0), channel_id=0,
      frontend_attributes={
        _xla_send_recv_source_target_pairs="{{1,0}}",
        _xla_send_recv_validation="{{0,1}}"
      }
    send.0 = (u32[2], u32[], token[]) send(send-data, after-all.0),
      channel_id=0,
      frontend_attributes={
        _xla_send_recv_source_target_pairs="{{1,0}}",
        _xla_send_recv_validation="{{0,1}}"
      }
    recv-done.0 = (u32[2], token[]) recv-done(recv.0), channel_id=0,
    frontend_attributes={
        _xla_send_recv_pipeline="0"
      }
    recv-data.0 = u32[2] get-tuple-element(recv-done.0), index=0
    send-done.0 = token[] send-done(send.0), channel_id=0,
    frontend_attributes={
        _xla_send_recv_pipeline="0"
      }

    after-all.1 = token[] after-all()
    recv.1 = (u32[2], u32[], token[]) recv(after-all.1), channel_id=0,
      frontend_attributes={
        _xla_send_recv_source_target_pairs="{{0,1}}"
      }
    send.1 = (u32[2], u32[], token[]) send(send-data, after-all.1),
      channel_id=0,
      frontend_attributes={
        _xla_send_recv_source_target_pairs="{{0,1}}"
      }
    recv-done.1 = (u32[2], token[]) recv-done(recv.1), channel_id=0,
    frontend_attributes={
        _xla_send_recv_pipeline="0"
      }
    recv-data.1 = u32[2] get-tuple-element(recv-done.1), index=0

    replica = u32[] replica-id()
    constant0 = u32[] constant(0)
    compare0 = pred[] compare(replica, constant0), direction=EQ
    compare = pred[2] broadcast(compare0), dimensions={}
    recv-data = u32[2] select(compare, recv-data.0, recv-data.1)

    c1 = u32[] constant(1)
    new_count = u32[] add(count, c1)

    r = u32[2] broadcast(c1), dimensions={}
    s = u32[2] add(r, recv-data)

    send-done.1 = token[] send-done(send.1), channel_id=0,
    frontend_attributes={
        _xla_send_recv_pipeline="0"
      }
    ROOT result = (u32[], u32[2]) tuple(new_count, s)
  }

  ENTRY test_computation {
    c0 = u32[] constant(0)
    r = u32[] replica-id()
    init = u32[2] broadcast(r), dimensions={}
    while_init = (u32[], u32[2]) tuple(c0, init)
    while_result = (u32[], u32[2]) while(while_init), body=body, condition=cond
    ROOT result = u32[2] get-tuple-element(while_result), index=1
  }
''', [u32(2, 2), u32(3, 3)])

# Fp8CollectiveOpsTest with the CUDA types (f8e4m3fn, f8e5m2).
case('all_gather_8bit_float', 'AllGather_8BitFloat (%s), f8e4m3fn' % OPS_TEST, 2, '''
  HloModule test
  ENTRY test_computation {
    a0 = f8e4m3fn[1,2] constant({{1,2}})
    allgather = f8e4m3fn[2, 2] all-gather(a0), dimensions={0}
    p = f8e4m3fn[4] reshape(allgather)
    ROOT out = f32[4] convert(p)
  }
''', same(2, ('f32', np.array([1, 2, 1, 2], np.float32))))
case('all_to_all_8bit_float', 'AllToAll_8BitFloat (%s), f8e4m3fn' % OPS_TEST, 2, '''
  HloModule test
  ENTRY test_computation {
    a0 = f8e4m3fn[2] constant({1,2})
    a2a = f8e4m3fn[2] all-to-all(a0), dimensions={0}
    ROOT out = f32[2] convert(a2a)
  }
''', [('f32', np.array([1, 1], np.float32)), ('f32', np.array([2, 2], np.float32))])
case('collective_permute_8bit_float', 'CollectivePermute_8BitFloat (%s), f8e5m2' % OPS_TEST, 2, '''
  HloModule test
  ENTRY test_computation {
    a0 = f8e5m2[2] constant({1,2})
    a1 = f8e5m2[2] collective-permute(a0), source_target_pairs={{0,1}, {1,0}}
    ROOT out = f32[2] convert(a1)
  }
''', same(2, ('f32', np.array([1, 2], np.float32))))

case('while_loop_reduce_scatter', 'WhileLoopReduceScatterCodeMotion (%s)' % E2E_TEST, 2, '''
  HloModule test

  %add {
    %x = u32[] parameter(0)
    %y = u32[] parameter(1)
    ROOT %add = u32[] add(%x, %y)
  }

  %cond {
    %param = (u32[], u32[2], u32[1]) parameter(0)
    %count = get-tuple-element(%param), index=0
    %limit = u32[] constant(3)
    ROOT %result = pred[] compare(%count, %limit), direction=LT
  }

  %body {
    %param = (u32[], u32[2], u32[1]) parameter(0)

    %count = u32[] get-tuple-element(%param), index=0
    %increment = u32[] constant(1)
    %new_count = u32[] add(%count, %increment)
    %rs_input = u32[2] get-tuple-element(%param), index=1
    %rs = u32[1] reduce-scatter(%rs_input), replica_groups={{0,1}}, to_apply=%add, dimensions={0}
    %old_accum = u32[1] get-tuple-element(%param), index=2
    %new_accum = u32[1] add(%rs, %old_accum)
    %input_inc = u32[2] constant({1, 2})
    %new_rs_input = u32[2] add(%rs_input, %input_inc)
    ROOT ret = (u32[], u32[2], u32[1]) tuple(%new_count, %new_rs_input, %new_accum)
  }

  ENTRY test_computation {
    %count = u32[] constant(0)
    %id = u32[] replica-id()
    %id2 = u32[2] broadcast(id), dimensions={}
    %a0 = u32[2] constant({10, 15})
    %init_rs_input = u32[2] add(id2, a0)
    %init_rs_accum = u32[1] constant({5})
    %while_init = (u32[], u32[2], u32[1]) tuple(%count, %init_rs_input, %init_rs_accum)
    %while_result = (u32[], u32[2], u32[1]) while(%while_init), body=%body, condition=%cond
    ROOT gte = u32[1] get-tuple-element(%while_result), index=2
  }
''', [u32(74), u32(110)])

# Replica i gets A = (i+1) * ones(2,2) and B = {{0,0},{0,1}}; B.A keeps A's
# second row, so three rotations leave device i with replica (i+3)%4's value.
case('collective_permute_circular_pipeline', 'CollectivePermute_CircularPipelinePreOptimization '
     '(xla/tests/collective_pipeline_parallelism_test.cc)', 4, '''
  HloModule test

  while_cond {
    param = (u32[], f32[2,2], f32[2,2]) parameter(0)
    iter = u32[] get-tuple-element(param), index=0
    max_iter = u32[] constant(3)
    ROOT cmp = pred[] compare(iter, max_iter), direction=LT
  }

  while_body {
    param = (u32[], f32[2,2], f32[2,2]) parameter(0)
    iter = u32[] get-tuple-element(param), index=0
    data = f32[2,2] get-tuple-element(param), index=1
    weights = f32[2,2] get-tuple-element(param), index=2
    matmul = f32[2,2] dot(weights, data), lhs_contracting_dims={1},
        rhs_contracting_dims={0}
    cp = f32[2,2] collective-permute(matmul),
        source_target_pairs={{0,1}, {1,2}, {2,3}, {3,0}}
    iter_increment = u32[] constant(1)
    next_iter = u32[] add(iter, iter_increment)
    ROOT result = (u32[], f32[2,2], f32[2,2]) tuple(next_iter, cp, weights)
  }

  ENTRY test_computation {
    iter = u32[] constant(0)
    data = f32[2,2] parameter(0)
    weights = f32[2,2] parameter(1)
    input = (u32[], f32[2,2], f32[2,2]) tuple(iter, data, weights)
    while_res = (u32[], f32[2,2], f32[2,2]) while(input), condition=while_cond,
        body=while_body
    ROOT data_out = f32[2,2] get-tuple-element(while_res), index=1
  }
''', [('f32', np.array([[0, 0], [v, v]], np.float32)) for v in (2, 3, 4, 1)],
     inputs=[('f32', [np.full((2, 2), i + 1, np.float32) for i in range(4)]),
             ('f32', np.array([[0, 0], [0, 1]], np.float32))])

# ---- hlorun's own: partitions, channel_id, use_global_device_ids, iota groups.
# Every device holds x = its flattened id (replica * P + partition).
OWN = "hlorun's own case, values from XLA's operation_semantics.md: "
GRID = '''
  HloModule grid

  add {
    a = u32[] parameter(0)
    b = u32[] parameter(1)
    ROOT s = u32[] add(a, b)
  }

  ENTRY main {
    r = u32[] replica-id()
    p = u32[] partition-id()
    np = u32[] constant(NP)
    rp = u32[] multiply(r, np)
    x = u32[] add(rp, p)
    x1 = u32[1] reshape(x)
BODY
  }
'''


def grid(name, what, replicas, partitions, body, want):
    hlo = GRID.replace('NP', str(partitions)).replace('BODY', body)
    case(name, OWN + what, replicas, hlo, want, partitions=partitions)


grid('replica_and_partition_id', 'replica-id and partition-id on 2 replicas x 2 partitions',
     2, 2, '    ROOT t = (u32[], u32[]) tuple(r, p)',
     [[('u32', np.uint32(d // 2)), ('u32', np.uint32(d % 2))] for d in range(4)])
# channel_id without use_global_device_ids: cross-replica-and-partition; the
# group {0} is replica 0 on every partition (devices 0, 1), {1} devices 2, 3.
grid('all_reduce_cross_replica_and_partition', 'all-reduce with channel_id, groups of replica ids '
     'span every partition', 2, 2,
     '    ROOT ar = u32[1] all-reduce(x1), channel_id=1, replica_groups={{0},{1}}, to_apply=add',
     [u32(1), u32(1), u32(5), u32(5)])
# Without channel_id the same groups are cross-replica: each partition apart.
grid('all_reduce_cross_replica_partitions', 'all-reduce without channel_id on 2 x 2: '
     'replicas of one partition reduce together', 2, 2,
     '    ROOT ar = u32[1] all-reduce(x1), replica_groups={{0,1}}, to_apply=add',
     [u32(2), u32(4), u32(2), u32(4)])
# use_global_device_ids: ids are flattened device ids, in the listed order.
grid('all_gather_flattened_ids', 'all-gather with use_global_device_ids, groups {{3,0},{1,2}}',
     2, 2, '    ROOT ag = u32[2] all-gather(x1), channel_id=2, use_global_device_ids=true, '
     'replica_groups={{3,0},{1,2}}, dimensions={0}',
     [u32(3, 0), u32(1, 2), u32(1, 2), u32(3, 0)])
# Iota groups [2,2]<=[2,2]T(1,0) = {{0,2},{1,3}}.
grid('all_gather_iota_groups_flattened', 'all-gather with iota replica_groups [2,2]<=[2,2]T(1,0) '
     '= {{0,2},{1,3}} over flattened ids', 2, 2,
     '    ROOT ag = u32[2] all-gather(x1), channel_id=3, use_global_device_ids=true, '
     'replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}',
     [u32(0, 2), u32(1, 3), u32(0, 2), u32(1, 3)])
grid('all_reduce_iota_groups', 'all-reduce with iota replica_groups [2,2]<=[4] = {{0,1},{2,3}} '
     'on 4 replicas', 4, 1,
     '    ROOT ar = u32[1] all-reduce(x1), replica_groups=[2,2]<=[4], to_apply=add',
     [u32(1), u32(1), u32(5), u32(5)])
# collective-permute with channel_id pairs partition ids, within each replica.
grid('collective_permute_cross_partition', 'collective-permute with channel_id swaps partitions '
     'within each replica', 2, 2,
     '    ROOT cp = u32[1] collective-permute(x1), channel_id=4, source_target_pairs={{0,1},{1,0}}',
     [u32(1), u32(0), u32(3), u32(2)])
# all-to-all with channel_id: cross-partition, one group of the 4 partitions.
grid('all_to_all_cross_partition', 'all-to-all with channel_id over 4 partitions of one replica',
     1, 4, '''    ten = u32[4] constant({0, 10, 20, 30})
    xb = u32[4] broadcast(x), dimensions={}
    v = u32[4] add(xb, ten)
    ROOT a2a = u32[4] all-to-all(v), channel_id=5, replica_groups={{0,1,2,3}}, dimensions={0}''',
     [u32(*(10 * d + s for s in range(4))) for d in range(4)])
# reduce-scatter cross-replica-and-partition over all 4 devices (empty groups).
grid('reduce_scatter_cross_replica_and_partition', 'reduce-scatter with channel_id and empty '
     'groups: one group of every device, in replica-major order', 2, 2, '''    xb = u32[4] broadcast(x), dimensions={}
    io = u32[4] iota(), iota_dimension=0
    v = u32[4] multiply(xb, io)
    ROOT rs = u32[1] reduce-scatter(v), channel_id=6, replica_groups={}, dimensions={0}, to_apply=add''',
     [u32(6 * d) for d in range(4)])


# The same modules with each device's copy of the input given apart
# (--per-device-inputs): the values XLA's test passes are the same on every
# replica, so the expected results do not change. These run even while a
# replicated input is mishandled (KNOWN_FAILURES, bug 1).
PER_DEVICE = ('all_reduce_three_replica_groups', 'all_reduce_add_f16', 'all_reduce_add_f64',
              'all_reduce_minimum_f16_negative', 'all_reduce_multiply_s8_negative',
              'all_reduce_and_pred_equal', 'reduce_scatter_constrain_layout')
for c in [c for c in CASES if c[0] in PER_DEVICE]:
    name, source, replicas, partitions, hlo, inputs, expected = c
    n = replicas * partitions
    CASES.append((name + '_per_device_inputs', source + '; every device\'s input given apart',
                  replicas, partitions, hlo, [(et, [a] * n) for et, a in inputs], expected))


def main():
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names)), 'duplicate case names'
    for c in CASES:
        emit(*c)
    print('%d cases written to %s' % (len(CASES), os.path.normpath(ROOT)))


if __name__ == '__main__':
    main()

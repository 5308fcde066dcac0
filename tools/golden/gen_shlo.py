#!/usr/bin/python3
"""gen_shlo.py: cases transcribed from StableHLO's test files.

Values are copied by hand from openxla/stablehlo: stablehlo/testdata/*.mlir
(inputs and expected outputs that XLA computed) and stablehlo/tests/interpret/
*.mlir (expected values written in the tests).  For elementwise ops only the
first elements of the 20x20 arrays are kept (the op is position-independent),
which keeps the cases small.  Hex strings are the files' "0x..." blobs
(little-endian element bytes); spaces are only for reading.
Writes tests/golden/shlo_*.
"""
import re

import numpy as np

from gcase import emit, parse_dense

TD = 'stablehlo/testdata/'
WIDTH = {'pred': 1, 's8': 1, 'u8': 1, 's16': 2, 'u16': 2, 'f16': 2, 'bf16': 2, 's32': 4, 'u32': 4,
         'f32': 4, 's64': 8, 'u64': 8, 'f64': 8, 'c64': 8, 'c128': 16}
HLO_OP = {'exponential': 'exponential', 'cosine': 'cosine', 'sine': 'sine', 'log': 'log',
          'sqrt': 'sqrt', 'rsqrt': 'rsqrt', 'tanh': 'tanh', 'tan': 'tan', 'logistic': 'logistic',
          'log_plus_one': 'log-plus-one', 'exponential_minus_one': 'exponential-minus-one',
          'cbrt': 'cbrt', 'abs': 'abs', 'sign': 'sign', 'negate': 'negate', 'floor': 'floor',
          'ceil': 'ceil', 'round_nearest_even': 'round-nearest-even',
          'round_nearest_afz': 'round-nearest-afz', 'is_finite': 'is-finite',
          'real': 'real', 'imag': 'imag', 'not': 'not', 'count_leading_zeros': 'count-leading-zeros',
          'popcnt': 'popcnt', 'add': 'add', 'subtract': 'subtract', 'multiply': 'multiply',
          'divide': 'divide', 'remainder': 'remainder', 'power': 'power', 'atan2': 'atan2',
          'maximum': 'maximum', 'minimum': 'minimum', 'complex': 'complex'}


def hexarr(h, et, n=None):
    h = re.sub(r'\s+', '', h)
    w = WIDTH[et] * 2
    k = len(h) // w
    if n is not None:
        k = min(k, n)
    return parse_dense('"0x' + h[:k * w] + '"', '%s[%d]' % (et, k))


def U(op, et, hin, hexp, src, ot=None, compare='close', n=None):
    """Unary elementwise op on the first elements of a testdata file."""
    ot = ot or et
    a = hexarr(hin, et, n)
    e = hexarr(hexp, ot, n)
    k = min(len(a), len(e))
    a, e = a[:k], e[:k]
    name = 'shlo_%s_%s' % (op, et)
    emit(name, 'elementwise:' + op, compare,
         'Arg_0 = %s[%d] parameter(0)\nROOT r = %s[%d] %s(Arg_0)' % (et, k, ot, k, HLO_OP[op]),
         [('%s[%d]' % (et, k), a)], ('%s[%d]' % (ot, k), e), source=TD + src, ops=[op])


def B(op, et, hl, hr, hexp, src, ot=None, compare='close', n=None):
    """Binary elementwise op on the first elements of a testdata file."""
    ot = ot or et
    a, b, e = hexarr(hl, et, n), hexarr(hr, et, n), hexarr(hexp, ot, n)
    k = min(len(a), len(b), len(e))
    a, b, e = a[:k], b[:k], e[:k]
    name = 'shlo_%s_%s' % (op, et)
    T = '%s[%d]' % (et, k)
    emit(name, 'elementwise:' + op, compare,
         'Arg_0 = %s parameter(0)\nArg_1 = %s parameter(1)\nROOT r = %s[%d] %s(Arg_0, Arg_1)'
         % (T, T, ot, k, HLO_OP[op]),
         [(T, a), (T, b)], ('%s[%d]' % (ot, k), e), source=TD + src, ops=[op])


# ---------------------------------------------------------------- complex64
U('exponential', 'c64',
  '115F2FC0D77B163E 7357A2C0EA594340 47CF67C0BBC6113F 8769864035E614BF 99C36B3FE80B823E'
  'DACABD3F51D0933E 2AE52B405BB320C0 DF7F643FDE5AB93E F3E7F9BD4554B340 C2C637C0F3B86D3F'
  'A91DB4C0A39C5BBF 3F89933FC7E199C0 A2AA11BF2287E3BF D429BDC06DB2F43F 61F61AC074F26D3F'
  '0AE5F5BF0D89403F',
  '9FCA823DD4E11A3C B564CCBBCE4A123A 9968B83CB41B6C3C C8F75E429F9A12C2 1D971B404491213F'
  'CD208740B787A03F F0943DC1196A0AC1 631F1240905A5D3F 3850303F65540EBF 0AE40A3D79B1393D'
  'CF081A3B8D2532BB CF149C3EE8B64940 E401EEBDC9D40DBF 53626DBA594A273B B29D593D66BD913D'
  '0308DB3DF1E7CC3D', 'exp_shape_complex64_20_20.mlir')
U('cosine', 'c64',
  'E468124024650140 70991C4018FDC6C0 7651343FB46E8140 8C8D6740748700BD E6372AC0D9F35F40'
  'B025E9BF1FC819BF EFE9364097CCFE3F BF0A8F3F2FD32CBF 8C546C4025943FC0 09D2FC3D73FB7BC0'
  '502E533F62EC4DBF 9A52213E8344AE3F 4B2205C09D83E23E F4E7CD3E58782741 241D713E77BE3A3F'
  '7DD2C1BF2D53CC3E',
  '2A8F21C0CCFC32C0 59C940C392A62043 8817AE4180D993C1 B19A63BF48D06BBC 18CA6AC15A2CF540'
  'F49C96BE30191EBF 941565C046A080BF 82A30A3F3472273F 455708C168BEA6C0 D69ECB412EF74940'
  '4E06693FCB18283F 136A0340496C92BE 2E4309BF6844CC3E 04937C4664DCD6C5 3E149F3FBF223EBE'
  '2C3B7A3DCA74D13E', 'cos_shape_complex64_20_20.mlir')

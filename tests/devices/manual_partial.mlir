// A manual computation over one axis ("x") of a 2 x 4 mesh, the other
// ("y") left to the automatic partitioner: each body sees 4 of x's 8 rows
// (the "y" in {"x", "y"} does not split them further), transposes and
// reshapes them, and the results come back as column blocks (out sharding
// [{}, {"x"}]). With x[i][j] = 16 i + j, column block b (columns 8b to
// 8b + 7) of the result is x[4b : 4b + 4] transposed to 16 x 4 and read row
// by row as 8 x 8; manual_partial.expected is numpy's
//   x = numpy.arange(128).reshape(8, 16)
//   numpy.concatenate([x[4*b:4*b+4].T.reshape(8, 8) for b in (0, 1)], axis=1)
module @m attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func public @main() -> tensor<8x16xi32> {
    %r = stablehlo.iota dim = 0 : tensor<8x16xi32>
    %c = stablehlo.iota dim = 1 : tensor<8x16xi32>
    %k = stablehlo.constant dense<16> : tensor<8x16xi32>
    %rk = stablehlo.multiply %r, %k : tensor<8x16xi32>
    %a = stablehlo.add %rk, %c : tensor<8x16xi32>
    %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x", "y"}, {}]>] out_shardings=[<@mesh, [{}, {"x"}]>] manual_axes={"x"} (%b: tensor<4x16xi32>) {
      %1 = stablehlo.transpose %b, dims = [1, 0] : (tensor<4x16xi32>) -> tensor<16x4xi32>
      %2 = stablehlo.reshape %1 : (tensor<16x4xi32>) -> tensor<8x8xi32>
      sdy.return %2 : tensor<8x8xi32>
    } : (tensor<8x16xi32>) -> tensor<8x16xi32>
    return %0 : tensor<8x16xi32>
  }
}

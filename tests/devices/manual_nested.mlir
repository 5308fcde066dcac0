// Nested manual computations on a 2 x 2 mesh (device = 2a + b): the outer
// splits x's rows over "a", the inner splits each half's columns over "b",
// squares its 2 x 4 block, and the outer doubles what the inner assembled.
// The inner assembly must take a block from the device of the same "a"
// (the value it splits is that device's half): the result is 2 x^2 for
// every element, here with x[i][j] = 8 i + j, as manual_nested.expected
// writes out (numpy: 2 * numpy.arange(32).reshape(4, 8) ** 2).
module @m attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func public @main() -> tensor<4x8xi32> {
    %r = stablehlo.iota dim = 0 : tensor<4x8xi32>
    %c = stablehlo.iota dim = 1 : tensor<4x8xi32>
    %k = stablehlo.constant dense<8> : tensor<4x8xi32>
    %rk = stablehlo.multiply %r, %k : tensor<4x8xi32>
    %x = stablehlo.add %rk, %c : tensor<4x8xi32>
    %0 = sdy.manual_computation(%x) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<2x8xi32>) {
      %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{}, {"b"}]>] out_shardings=[<@mesh, [{}, {"b"}]>] manual_axes={"b"} (%arg2: tensor<2x4xi32>) {
        %2 = stablehlo.multiply %arg2, %arg2 : tensor<2x4xi32>
        sdy.return %2 : tensor<2x4xi32>
      } : (tensor<2x8xi32>) -> tensor<2x8xi32>
      %3 = stablehlo.add %1, %1 : tensor<2x8xi32>
      sdy.return %3 : tensor<2x8xi32>
    } : (tensor<4x8xi32>) -> tensor<4x8xi32>
    return %0 : tensor<4x8xi32>
  }
}

// The two-layer MLP of mlp_global.hlo as StableHLO with Shardy shardings,
// written the way JAX lowers a jax.shard_map over a 2 x 4 mesh
// (data x model): inside the manual computation each device holds 4 rows of
// x and 8 hidden units (columns of w1, entries of b1, rows of w2); its
// partial products are summed over the model axis (lax.psum: the
// all-reduce over the groups {0,1,2,3} and {4,5,6,7}, device = 4 * data +
// model). Given the same global inputs it gives mlp_global.hlo's result.
module @jit_mlp attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg3: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<8x16xf32> {jax.result_info = "", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = sdy.manual_computation(%arg0, %arg1, %arg2, %arg3) in_shardings=[<@mesh, [{"data"}, {}]>, <@mesh, [{}, {"model"}]>, <@mesh, [{"model"}]>, <@mesh, [{"model"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data", "model"} (%arg4: tensor<4x16xf32>, %arg5: tensor<16x8xf32>, %arg6: tensor<8xf32>, %arg7: tensor<8x16xf32>) {
      %1 = stablehlo.dot_general %arg4, %arg5, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32> loc(#loc3)
      %2 = stablehlo.broadcast_in_dim %arg6, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
      %3 = stablehlo.add %1, %2 : tensor<4x8xf32>
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
      %5 = stablehlo.maximum %3, %4 : tensor<4x8xf32>
      %6 = stablehlo.dot_general %5, %arg7, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      %7 = "stablehlo.all_reduce"(%6) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
        %8 = stablehlo.add %arg8, %arg9 : tensor<f32>
        stablehlo.return %8 : tensor<f32>
      }) : (tensor<4x16xf32>) -> tensor<4x16xf32> loc(#loc4)
      sdy.return %7 : tensor<4x16xf32>
    } : (tensor<8x16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32> loc(#loc2)
    return %0 : tensor<8x16xf32>
  }
}
#loc1 = loc("mlp.py":12:0)
#loc2 = loc("jit(mlp)/shard_map"(#loc1))
#loc3 = loc("jit(mlp)/shard_map/dot_general"(#loc1))
#loc4 = loc("jit(mlp)/shard_map/psum"(#loc1))

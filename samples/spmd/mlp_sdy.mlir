// The two-layer MLP of mlp_global.hlo as JAX lowers jax.jit(mlp) with
// NamedShardings on a 2 x 4 mesh (data x model) under Shardy: the
// arguments' and the result's shardings, and one sharding constraint
// (jax.lax.with_sharding_constraint on the hidden layer). Not yet
// partitioned: it runs once, as one device, and gives mlp_global.hlo's
// result for the same global inputs (and mlp_2x4.hlo's, its partitioned
// twin's, on 8 devices).
module @jit_mlp attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg3: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<8x16xf32> {jax.result_info = "", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32> loc(#loc3)
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<32xf32>) -> tensor<8x32xf32> loc(#loc4)
    %2 = stablehlo.add %0, %1 : tensor<8x32xf32> loc(#loc4)
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %4 = stablehlo.maximum %2, %3 : tensor<8x32xf32> loc(#loc5)
    %5 = sdy.sharding_constraint %4 <@mesh, [{"data"}, {"model"}]> : tensor<8x32xf32> loc(#loc6)
    %6 = stablehlo.dot_general %5, %arg3, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32> loc(#loc7)
    return %6 : tensor<8x16xf32>
  }
}
#loc1 = loc("mlp.py":8:0)
#loc2 = loc("mlp.py":9:0)
#loc3 = loc("jit(mlp)/jit(main)/dot_general"(#loc1))
#loc4 = loc("jit(mlp)/jit(main)/add"(#loc1))
#loc5 = loc("jit(mlp)/jit(main)/max"(#loc1))
#loc6 = loc("jit(mlp)/jit(main)/sharding_constraint"(#loc1))
#loc7 = loc("jit(mlp)/jit(main)/dot_general"(#loc2))

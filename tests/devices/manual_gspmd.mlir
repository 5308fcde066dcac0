// JAX's shard_map as lowered without Shardy: the manual region is written
// out as Sharding / SPMDFullToShardShape / SPMDShardToFullShape custom
// calls whose shardings are mhlo.sharding attributes of the ops, around a
// call of the body. x's columns are split over 2 partitions (partition 0:
// columns 0-1, partition 1: columns 2-3); the body sums the halves (psum):
//   x = {{1,2,3,4},{5,6,7,8},{9,10,11,12},{13,14,15,16}}
//   s = left + right = {{4,6},{12,14},{20,22},{28,30}} on both partitions
// and the result, assembled by columns, is s twice side by side:
//   {{4,6,4,6},{12,14,12,14},{20,22,20,22},{28,30,28,30}}.
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<4x4xf32> {mhlo.sharding = "{devices=[1,2]<=[2]}"}) {
    %x = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]> : tensor<4x4xf32>
    %0 = stablehlo.custom_call @Sharding(%x) {backend_config = "", mhlo.sharding = "{devices=[1,2]<=[2]}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<4x4xf32>) -> tensor<4x2xf32>
    %2 = call @shmap_body(%1) : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %3 = stablehlo.custom_call @Sharding(%2) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {backend_config = "", mhlo.sharding = "{devices=[1,2]<=[2]}"} : (tensor<4x2xf32>) -> tensor<4x4xf32>
    return %4 : tensor<4x4xf32>
  }
  func.func private @shmap_body(%arg0: tensor<4x2xf32>) -> (tensor<4x2xf32> {jax.result_info = "[None, ('x',)]"}) {
    %0 = "stablehlo.all_reduce"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4x2xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// RUN: spconv-opt %s -spconv-profile="max-entries=2" -verify-diagnostics
// RUN: spconv-opt %s -spconv-profile="max-entries=3" | FileCheck %s
// RUN: not spconv-opt %s -spconv-profile="max-entries=1048577" 2>&1 | FileCheck %s --check-prefix=BOUND
// RUN: not spconv-opt %s -spconv-profile="max-entries=-1" 2>&1 | FileCheck %s --check-prefix=BOUND-NEGATIVE

// The runtime's profile holds ids below SPCONV_RT_PROFILE_MAX_ENTRIES: a
// module with more timed ops than max-entries is rejected at the first op
// past the limit, not left to fail (or allocate) at run time.

// BOUND: error: spconv-profile: max-entries must be in [0, 1048576], got 1048577
// BOUND-NEGATIVE: error: spconv-profile: max-entries must be in [0, 1048576], got -1

// Three timed ops: one shared build and two computes.
// CHECK-LABEL: func.func @net
// CHECK-COUNT-3: call @spconv_rt_profile_begin
// CHECK-NOT: call @spconv_rt_profile_begin
func.func @net(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>, %w: tensor<27x4x4xf32>)
    -> tensor<?x4xf32> {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>,
         tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
  %a = spconv.rulebook_conv %rb, %f, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>,
        tensor<?x4xf32>, tensor<27x4x4xf32> -> tensor<?x4xf32>
  // expected-error @+1 {{'spconv.rulebook_conv' op would be timed op #2, past the limit of 2 timed ops per module (spconv-profile max-entries; the runtime's profile holds 1048576)}}
  %b = spconv.rulebook_conv %rb, %a, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>,
        tensor<?x4xf32>, tensor<27x4x4xf32> -> tensor<?x4xf32>
  return %b : tensor<?x4xf32>
}

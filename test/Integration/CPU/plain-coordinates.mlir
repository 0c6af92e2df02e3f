// Coordinates from code that knows nothing of #spconv.grid (an importer's
// plain tensor<?x4xi32>) enter the dialect through tensor.cast to the encoded
// type and leave it the same way: the cast only states the grid, and the
// lowering drops it with the encodings. The result matches the reference,
// and coordinates outside the stated grid are reported like any others.
func.func @from_importer(%coords: tensor<?x4xi32>, %features: tensor<?x4xf32>,
                         %weight: tensor<27x4x8xf32>) -> (tensor<?x4xi32>, tensor<?x8xf32>) {
  %grid = tensor.cast %coords : tensor<?x4xi32> to tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %grid, %features, %weight
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x8xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>
  %plain = tensor.cast %oc : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>> to tensor<?x4xi32>
  return %plain, %of : tensor<?x4xi32>, tensor<?x8xf32>
}

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_npy.py %t/c.npy int32 "[[0, 1, 1, 1], [0, 1, 1, 2], [0, 2, 2, 2], [0, 7, 7, 7]]"
// RUN: %python -c "import numpy as np; np.save('%t/f.npy', np.arange(16, dtype=np.float32).reshape(4, 4) / 8)"
// RUN: %python -c "import numpy as np; np.save('%t/w.npy', np.arange(864, dtype=np.float32).reshape(27, 4, 8) / 100)"
// RUN: spconv-ref conv --kind subm --kernel 3,3,3 --grid 8,8,8 --coords %t/c.npy --features %t/f.npy --weight %t/w.npy --out-dir %t/ref
// RUN: spconv-run %s --entry from_importer --input %t/c.npy --input %t/f.npy --input %t/w.npy --output-dir %t/cpu
// RUN: spconv-npy-compare %t/cpu/out0.npy %t/ref/out0.npy
// RUN: spconv-npy-compare %t/cpu/out1.npy %t/ref/out1.npy
// RUN: spconv-run %s --entry from_importer --target gpu-emulator --input %t/c.npy --input %t/f.npy --input %t/w.npy --output-dir %t/emu
// RUN: spconv-npy-compare %t/emu/out1.npy %t/ref/out1.npy

// A site outside the grid the cast states.
// RUN: %python %S/Inputs/make_npy.py %t/bad.npy int32 "[[0, 1, 1, 1], [0, 1, 1, 2], [0, 2, 8, 2], [0, 7, 7, 7]]"
// RUN: not spconv-run %s --entry from_importer --input %t/bad.npy --input %t/f.npy --input %t/w.npy --output-dir %t/out 2>&1 | FileCheck %s
// CHECK: input coordinates: row 2: coordinate 1 (column 2) = 8 is outside [0, 8)

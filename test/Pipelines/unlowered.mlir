// An op no pipeline lowers (here shape.add: no shape-to-standard in our
// pipelines) stays in the output of the conversions to LLVM, which are
// partial; the pipelines fail on it at the end instead of succeeding with
// it, naming it rather than the unrealized casts around it
// (spconv-check-lowered).
// RUN: spconv-opt %s --spconv-to-cpu -verify-diagnostics -o /dev/null
// RUN: not spconv-opt %s --spconv-to-gpu-emulator -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMULATOR
// RUN: not spconv-opt %s --spconv-to-cuda=format=isa -o /dev/null 2>&1 | FileCheck %s --check-prefix=CUDA
// EMULATOR: 'shape.add' is left unlowered by spconv-to-gpu-emulator
// CUDA: 'shape.add' is left unlowered by spconv-to-cuda

func.func @f(%a: index) -> index {
  // expected-error @below {{'shape.add' is left unlowered by spconv-to-cpu}}
  %y = shape.add %a, %a : index, index -> index
  return %y : index
}

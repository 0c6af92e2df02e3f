//===- NetworkTest.cpp - Build, lower and run a network from C++ ----------===//
//
// Part of the spconv-mlir project.
//
// What an embedder does without the project's tools: build a two-layer
// network with the op builders, lower it with the spconv-to-cpu pipeline,
// JIT it with MLIR's ExecutionEngine (libomp and MLIR's C runner utilities
// passed as shared libraries, the runtime linked in) and compare its output
// with a naive implementation of DESIGN.md's semantics written here.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvOps.h"
#include "SpConv/InitAll.h"
#include "SpConv/Pipelines/Pipelines.h"
#include "spconv-rt/SpConvRuntime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::spconv;

namespace {

constexpr int32_t kExtent = 6; // grid [6, 6, 6]
constexpr int64_t kIn = 2, kMid = 3, kOut = 2;
using Site = std::array<int32_t, 4>; // batch, x, y, z

/// `rows x cols` row-major values, deterministic.
std::vector<float> values(size_t count, unsigned seed) {
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i)
    out[i] = static_cast<float>((i * 7 + seed * 13) % 11) / 8.0f - 0.5f;
  return out;
}

/// DESIGN.md's convolution, straight from the definition: for every output
/// site `o` and kernel offset `j`, the input site `x = o * stride - padding
/// + j * dilation` (dilation 1 here) contributes `in[x] @ weight[j]`.
/// `outputs` are given (subm: the inputs; regular: computed by the caller).
std::vector<float> convolve(const std::vector<Site> &inputs,
                            const std::vector<float> &in, int64_t cin,
                            const std::vector<Site> &outputs, int kernel,
                            int stride, int padding,
                            const std::vector<float> &weight, int64_t cout,
                            const std::vector<float> &bias) {
  std::map<Site, size_t> row;
  for (size_t i = 0; i < inputs.size(); ++i)
    row[inputs[i]] = i;
  std::vector<float> out(outputs.size() * cout, 0.0f);
  for (size_t o = 0; o < outputs.size(); ++o) {
    for (int j = 0; j < kernel * kernel * kernel; ++j) {
      int offset[3] = {j / (kernel * kernel), j / kernel % kernel, j % kernel};
      Site x = {outputs[o][0], 0, 0, 0};
      for (int d = 0; d < 3; ++d)
        x[d + 1] = outputs[o][d + 1] * stride - padding + offset[d];
      auto it = row.find(x);
      if (it == row.end())
        continue;
      for (int64_t c = 0; c < cout; ++c)
        for (int64_t k = 0; k < cin; ++k)
          out[o * cout + c] +=
              in[it->second * cin + k] * weight[(j * cin + k) * cout + c];
    }
    for (int64_t c = 0; c < cout && !bias.empty(); ++c)
      out[o * cout + c] += bias[c];
  }
  return out;
}

/// A memref descriptor over `data` (not owned).
template <typename T>
StridedMemRefType<T, 2> view2d(std::vector<T> &data, int64_t cols) {
  int64_t rows = static_cast<int64_t>(data.size()) / cols;
  return {data.data(), data.data(), 0, {rows, cols}, {cols, 1}};
}
template <typename T, int N>
StridedMemRefType<T, N> view(std::vector<T> &data,
                             std::array<int64_t, N> sizes) {
  StridedMemRefType<T, N> descriptor;
  descriptor.basePtr = descriptor.data = data.data();
  descriptor.offset = 0;
  int64_t stride = 1;
  for (int d = N - 1; d >= 0; --d) {
    descriptor.sizes[d] = sizes[d];
    descriptor.strides[d] = stride;
    stride *= sizes[d];
  }
  return descriptor;
}

/// @net(coords, features, w1, w2, bias) -> (coords, features): a subm
/// 3x3x3 conv (2 -> 3 channels), then a regular 2x2x2 stride-2 conv with
/// bias (3 -> 2 channels).
OwningOpRef<ModuleOp> buildNetwork(MLIRContext &context) {
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  Type f32 = b.getF32Type();
  auto coords = RankedTensorType::get(
      {ShapedType::kDynamic, 4}, b.getI32Type(),
      GridAttr::get(&context, {kExtent, kExtent, kExtent}));
  SmallVector<Type> inputs = {
      coords, RankedTensorType::get({ShapedType::kDynamic, kIn}, f32),
      RankedTensorType::get({27, kIn, kMid}, f32),
      RankedTensorType::get({8, kMid, kOut}, f32),
      RankedTensorType::get({kOut}, f32)};
  auto net = func::FuncOp::create(b, loc, "net", b.getFunctionType(inputs, {}));
  Block *entry = net.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto subm = ConvOp::create(
      b, loc, GeometryAttr::get(&context, ConvKind::Subm, {3, 3, 3}),
      entry->getArgument(0), entry->getArgument(1), entry->getArgument(2));
  auto down = ConvOp::create(
      b, loc,
      GeometryAttr::get(&context, ConvKind::Regular, {2, 2, 2}, {2, 2, 2}),
      subm.getOutCoords(), subm.getOutFeatures(), entry->getArgument(3),
      entry->getArgument(4));
  func::ReturnOp::create(b, loc, down.getResults());
  net.setFunctionType(b.getFunctionType(inputs, down.getResultTypes()));
  // A C entry point: _mlir_ciface_net(results *, descriptors *...).
  net->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return module;
}

struct Results {
  StridedMemRefType<int32_t, 2> coords;
  StridedMemRefType<float, 2> features;
};

TEST(NetworkTest, BuildLowerAndRun) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  OwningOpRef<ModuleOp> module = buildNetwork(context);
  ASSERT_TRUE(succeeded(verify(*module)));
  PassManager pm(&context);
  buildSpConvToCPUPipeline(pm, SpConvToCPUPipelineOptions());
  ASSERT_TRUE(succeeded(pm.run(*module)));

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // The lowered code calls OpenMP and memrefCopy; the runtime is linked in.
  SmallVector<StringRef> libraries = {SPCONV_TEST_LIBOMP,
                                      SPCONV_TEST_C_RUNNER_UTILS};
  ExecutionEngineOptions options;
  options.sharedLibPaths = libraries;
  auto engine = ExecutionEngine::create(*module, options);
  ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
  auto symbol = (*engine)->lookup("_mlir_ciface_net");
  ASSERT_TRUE(bool(symbol)) << llvm::toString(symbol.takeError());
  using Net =
      void (*)(Results *, StridedMemRefType<int32_t, 2> *,
               StridedMemRefType<float, 2> *, StridedMemRefType<float, 3> *,
               StridedMemRefType<float, 3> *, StridedMemRefType<float, 1> *);
  auto run = reinterpret_cast<Net>(*symbol);

  // Two batches of sites, some neighbours, some alone.
  std::vector<Site> sites;
  for (int32_t batch = 0; batch < 2; ++batch)
    for (int32_t i = 0; i < 14; ++i)
      sites.push_back({batch, (i * 5 + batch) % kExtent, (i * 3) % kExtent,
                       (i * i + 2 * batch) % kExtent});
  std::sort(sites.begin(), sites.end());
  sites.erase(std::unique(sites.begin(), sites.end()), sites.end());
  std::vector<int32_t> coords;
  for (const Site &site : sites)
    coords.insert(coords.end(), site.begin(), site.end());
  std::vector<float> features = values(sites.size() * kIn, 1);
  std::vector<float> w1 = values(27 * kIn * kMid, 2);
  std::vector<float> w2 = values(8 * kMid * kOut, 3);
  std::vector<float> bias = values(kOut, 4);

  auto coordsView = view2d(coords, 4);
  auto featuresView = view2d(features, kIn);
  auto w1View = view<float, 3>(w1, {27, kIn, kMid});
  auto w2View = view<float, 3>(w2, {8, kMid, kOut});
  auto biasView = view<float, 1>(bias, {kOut});
  Results results;
  spconv_rt_clear_error();
  run(&results, &coordsView, &featuresView, &w1View, &w2View, &biasView);
  ASSERT_STREQ(spconv_rt_last_error(), "");

  // The reference: subm on the input sites, then the regular conv's output
  // sites (every o with some input at o * 2 + j), sorted by key.
  std::vector<float> mid =
      convolve(sites, features, kIn, sites, 3, 1, 1, w1, kMid, {});
  std::set<Site> downSites;
  for (const Site &site : sites)
    downSites.insert({site[0], site[1] / 2, site[2] / 2, site[3] / 2});
  std::vector<Site> outputs(downSites.begin(), downSites.end());
  std::vector<float> expected =
      convolve(sites, mid, kMid, outputs, 2, 2, 0, w2, kOut, bias);

  ASSERT_EQ(results.coords.sizes[0], static_cast<int64_t>(outputs.size()));
  ASSERT_EQ(results.features.sizes[0], static_cast<int64_t>(outputs.size()));
  ASSERT_EQ(results.features.sizes[1], kOut);
  for (size_t o = 0; o < outputs.size(); ++o) {
    for (int d = 0; d < 4; ++d)
      EXPECT_EQ(results.coords.data[results.coords.offset +
                                    o * results.coords.strides[0] +
                                    d * results.coords.strides[1]],
                outputs[o][d])
          << "output " << o << ", column " << d;
    for (int64_t c = 0; c < kOut; ++c)
      EXPECT_NEAR(results.features.data[results.features.offset +
                                        o * results.features.strides[0] +
                                        c * results.features.strides[1]],
                  expected[o * kOut + c], 1e-4)
          << "output " << o << ", channel " << c;
  }
  // The results' buffers are the caller's.
  std::free(results.coords.basePtr);
  std::free(results.features.basePtr);
}

} // namespace

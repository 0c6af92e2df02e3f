//===- BuildersTest.cpp - The C++ builder API cannot be misused -----------===//
//
// Part of the spconv-mlir project.
//
// Attribute builders fill every default and report what is still wrong;
// op builders infer their result types; operands that determine no type
// give an op that fails verification with a message, never a crash.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvOps.h"
#include "SpConv/InitAll.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::spconv;

namespace {

class BuildersTest : public ::testing::Test {
protected:
  BuildersTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    // Every diagnostic is collected, none printed.
    handler = context.getDiagEngine().registerHandler([this](Diagnostic &d) {
      messages.push_back(d.str());
      return success();
    });
  }
  ~BuildersTest() override { context.getDiagEngine().eraseHandler(handler); }

  /// `N x (1 + rank)` coordinates, on `grid` when one is given.
  RankedTensorType coordsType(unsigned rank, GridAttr grid = {}) {
    return RankedTensorType::get({ShapedType::kDynamic, rank + 1},
                                 IntegerType::get(&context, 32), grid);
  }
  RankedTensorType tensorType(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, Float32Type::get(&context));
  }
  /// Block arguments of the given types, inside a function of `module`.
  SmallVector<Value> arguments(TypeRange types) {
    OpBuilder b(&context);
    b.setInsertionPointToEnd(module->getBody());
    auto function =
        func::FuncOp::create(b, loc, "f", b.getFunctionType(types, {}));
    Block *entry = function.addEntryBlock();
    builder.setInsertionPointToStart(entry);
    return SmallVector<Value>(entry->getArguments());
  }

  MLIRContext context{MLIRContext::Threading::DISABLED};
  DiagnosticEngine::HandlerID handler;
  std::vector<std::string> messages;
  Location loc = UnknownLoc::get(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder builder{&context};
};

TEST_F(BuildersTest, GeometryFillsDefaults) {
  auto subm = GeometryAttr::get(&context, ConvKind::Subm, {3, 5, 1});
  EXPECT_EQ(subm.getStride(), ArrayRef<int64_t>({1, 1, 1}));
  EXPECT_EQ(subm.getPadding(), ArrayRef<int64_t>({1, 2, 0}));
  EXPECT_EQ(subm.getDilation(), ArrayRef<int64_t>({1, 1, 1}));
  EXPECT_EQ(subm.getOutputPadding(), ArrayRef<int64_t>({0, 0, 0}));
  // The same attribute as the textual form with the fields left out.
  EXPECT_EQ(subm,
            parseAttribute("#spconv.geom<subm, kernel = [3, 5, 1]>", &context));

  auto dilated = GeometryAttr::get(&context, ConvKind::Subm, {3, 3}, {}, {},
                                   /*dilation=*/{2, 3});
  EXPECT_EQ(dilated.getPadding(), ArrayRef<int64_t>({2, 3}));

  auto down = GeometryAttr::get(&context, ConvKind::Regular, {3, 3, 3},
                                /*stride=*/{2, 2, 2}, /*padding=*/{1, 1, 1});
  FailureOr<SmallVector<int64_t>> shape = down.getOutputShape({41, 1600, 1408});
  ASSERT_TRUE(succeeded(shape));
  EXPECT_EQ(*shape, SmallVector<int64_t>({21, 800, 704}));
  EXPECT_TRUE(messages.empty());
}

TEST_F(BuildersTest, GeometryCheckedReportsInvalidInput) {
  auto emitError = [&] { return mlir::emitError(loc); };
  EXPECT_FALSE(GeometryAttr::getChecked(emitError, &context, ConvKind::Regular,
                                        {3, 3}, /*stride=*/{2}));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages.back(),
            "geometry field 'stride' has 1 entries but 'kernel' has 2");

  EXPECT_FALSE(GeometryAttr::getChecked(emitError, &context, ConvKind::Subm,
                                        {3, 3}, /*stride=*/{2, 1}));
  EXPECT_EQ(messages.back(), "subm geometry needs stride 1, got 2 in "
                             "dimension 0");

  EXPECT_FALSE(
      GeometryAttr::getChecked(emitError, &context, ConvKind::Regular, {}));
  EXPECT_EQ(messages.back(),
            "geometry must have 1 to 4 spatial dimensions, got 0");

  EXPECT_TRUE(GeometryAttr::getChecked(emitError, &context,
                                       ConvKind::Transposed, {2, 2},
                                       /*stride=*/{2, 2}));
  EXPECT_EQ(messages.size(), 3u);
}

TEST_F(BuildersTest, ConvInfersResultTypes) {
  GridAttr grid = GridAttr::get(&context, {41, 1600, 1408}, /*batch=*/2);
  SmallVector<Value> args = arguments(
      {coordsType(3, grid), tensorType({100, 16}), tensorType({27, 16, 32}),
       tensorType({32}), tensorType({27, 32, 16})});
  auto down = ConvOp::create(builder, loc,
                             GeometryAttr::get(&context, ConvKind::Regular,
                                               {3, 3, 3}, {2, 2, 2}, {1, 1, 1}),
                             args[0], args[1], args[2], args[3]);
  EXPECT_TRUE(succeeded(verify(down)));
  EXPECT_EQ(down.getOutCoords().getType(),
            coordsType(3, GridAttr::get(&context, {21, 800, 704}, 2)));
  EXPECT_EQ(down.getOutFeatures().getType(),
            tensorType({ShapedType::kDynamic, 32}));

  // Subm keeps the sites, so their number stays static.
  auto subm = ConvOp::create(
      builder, loc, GeometryAttr::get(&context, ConvKind::Subm, {3, 3, 3}),
      args[0], args[1], args[2]);
  EXPECT_TRUE(succeeded(verify(subm)));
  EXPECT_EQ(subm.getOutCoords().getType(), args[0].getType());
  EXPECT_EQ(subm.getOutFeatures().getType(), tensorType({100, 32}));

  auto pool = PoolOp::create(
      builder, loc, PoolKind::Max,
      GeometryAttr::get(&context, ConvKind::Regular, {2, 2, 2}, {2, 2, 2}),
      args[0], args[1]);
  EXPECT_TRUE(succeeded(verify(pool)));
  EXPECT_EQ(pool.getOutFeatures().getType(),
            tensorType({ShapedType::kDynamic, 16}));

  // Back onto the input sites: the inverse of `down`.
  auto up = InverseConvOp::create(
      builder, loc,
      GeometryAttr::get(&context, ConvKind::Inverse, {3, 3, 3}, {2, 2, 2},
                        {1, 1, 1}),
      args[0], down.getOutCoords(), down.getOutFeatures(), args[4]);
  EXPECT_TRUE(succeeded(verify(up)));
  EXPECT_EQ(up.getOutFeatures().getType(),
            tensorType({ShapedType::kDynamic, 16}));
  EXPECT_TRUE(messages.empty());
}

TEST_F(BuildersTest, RulebookOpsInferResultTypes) {
  GridAttr grid = GridAttr::get(&context, {40, 40, 40});
  SmallVector<Value> args =
      arguments({coordsType(3, grid), tensorType({ShapedType::kDynamic, 8}),
                 tensorType({8, 8, 4})});
  auto geometry =
      GeometryAttr::get(&context, ConvKind::Regular, {2, 2, 2}, {2, 2, 2});
  auto rulebookType = RulebookType::getChecked(
      [&] { return mlir::emitError(loc); }, &context, geometry, grid);
  ASSERT_TRUE(rulebookType);
  auto build = BuildRulebookOp::create(builder, loc, rulebookType, args[0]);
  EXPECT_TRUE(succeeded(verify(build)));
  EXPECT_EQ(build.getOutCoords().getType(),
            coordsType(3, GridAttr::get(&context, {20, 20, 20})));
  auto conv = RulebookConvOp::create(builder, loc, build.getRulebook(), args[1],
                                     args[2]);
  EXPECT_TRUE(succeeded(verify(conv)));
  EXPECT_EQ(conv.getOutFeatures().getType(),
            tensorType({ShapedType::kDynamic, 4}));
  auto pool = RulebookPoolOp::create(builder, loc, PoolKind::Avg,
                                     build.getRulebook(), args[1]);
  EXPECT_TRUE(succeeded(verify(pool)));
  EXPECT_EQ(pool.getOutFeatures().getType(),
            tensorType({ShapedType::kDynamic, 8}));
  // The gradients: pooling's has the features' type; the weight gradient
  // is K x Cin x Cout, forwards and
  // read backwards (an inverse conv's: its features are the output sites').
  auto poolGrad = RulebookPoolGradOp::create(builder, loc, PoolKind::Max,
                                             build.getRulebook(), args[1],
                                             pool.getOutFeatures());
  EXPECT_TRUE(succeeded(verify(poolGrad)));
  EXPECT_EQ(poolGrad.getInGrad().getType(), args[1].getType());
  auto weightGrad = RulebookWeightGradOp::create(
      builder, loc, build.getRulebook(), args[1], conv.getOutFeatures());
  EXPECT_TRUE(succeeded(verify(weightGrad)));
  EXPECT_EQ(weightGrad.getWeightGrad().getType(), tensorType({8, 8, 4}));
  auto inverseGrad = RulebookWeightGradOp::create(
      builder, loc, build.getRulebook(), conv.getOutFeatures(), args[1],
      /*inverse=*/true);
  EXPECT_TRUE(succeeded(verify(inverseGrad)));
  EXPECT_EQ(inverseGrad.getWeightGrad().getType(), tensorType({8, 4, 8}));

  // A geometry that does not fit the grid gives no rulebook type.
  EXPECT_FALSE(RulebookType::getChecked(
      [&] { return mlir::emitError(loc); }, &context,
      GeometryAttr::get(&context, ConvKind::Regular, {50, 1, 1}), grid));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages.back().find("the output grid is empty in dimension 0"),
            std::string::npos);
}

TEST_F(BuildersTest, MisusedOperandsFailVerification) {
  // Coordinates without a grid: the builder cannot compute the output grid,
  // and the verifier says why.
  SmallVector<Value> args =
      arguments({coordsType(3), tensorType({ShapedType::kDynamic, 16}),
                 tensorType({27, 16, 16})});
  auto conv = ConvOp::create(
      builder, loc,
      GeometryAttr::get(&context, ConvKind::Regular, {3, 3, 3}, {2, 2, 2}),
      args[0], args[1], args[2]);
  EXPECT_TRUE(failed(verify(conv)));
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages.back().find("coordinates must carry a #spconv.grid "
                                 "encoding"),
            std::string::npos);

  // A weight for another kernel.
  GridAttr grid = GridAttr::get(&context, {8, 8, 8});
  args = arguments({coordsType(3, grid), tensorType({ShapedType::kDynamic, 16}),
                    tensorType({8, 16, 16})});
  conv = ConvOp::create(builder, loc,
                        GeometryAttr::get(&context, ConvKind::Subm, {3, 3, 3}),
                        args[0], args[1], args[2]);
  EXPECT_TRUE(failed(verify(conv)));
  EXPECT_NE(messages.back().find("weight has 8 kernel offsets but the kernel "
                                 "[3, 3, 3] has 27"),
            std::string::npos);

  // A geometry too large for the grid.
  conv = ConvOp::create(
      builder, loc, GeometryAttr::get(&context, ConvKind::Regular, {9, 1, 1}),
      args[0], args[1], args[2]);
  EXPECT_TRUE(failed(verify(conv)));
  EXPECT_NE(messages.back().find("the output grid is empty in dimension 0"),
            std::string::npos);
}

} // namespace

//===- Reference.h - Naive reference for spconv semantics -------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// A brute-force transcription of DESIGN.md's "Semantics" section, used only
// by tests to check the compiler's backends. Clarity over speed: sites are
// looked up in ordered maps, outputs are sorted by comparing coordinate
// tuples (the same order as the 64-bit keys), and every sum is a plain loop.
//
// Precision: features, weights and biases are held as double (exact for
// f16/f32/f64 inputs) and every sum is accumulated in double, in a fixed
// order (kernel offset, then input row, then input channel); callers round
// the result to the output dtype once.
//
// Errors (bad shapes, bad geometry, duplicate or out-of-grid sites) are
// reported by returning false with a message; nothing throws or aborts.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_REF_REFERENCE_H
#define SPCONV_REF_REFERENCE_H

#include <cstdint>
#include <string>
#include <vector>

namespace spconv {
namespace ref {

//===----------------------------------------------------------------------===//
// Data
//===----------------------------------------------------------------------===//

/// A dense row-major array of doubles: features (N x C), weights
/// (K x Cin x Cout), biases (C), and the dense operands of unfold, fold and
/// segment_max.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> data;

  Tensor() = default;
  /// Zero-filled.
  explicit Tensor(std::vector<int64_t> shape);

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const;
  /// Element of a rank-2 or rank-3 tensor.
  double &at(int64_t i, int64_t j) { return data[i * shape[1] + j]; }
  double at(int64_t i, int64_t j) const { return data[i * shape[1] + j]; }
  double &at(int64_t i, int64_t j, int64_t k) {
    return data[(i * shape[1] + j) * shape[2] + k];
  }
  double at(int64_t i, int64_t j, int64_t k) const {
    return data[(i * shape[1] + j) * shape[2] + k];
  }
};

/// Coordinates of active sites: `rows x (1 + dims)` int32, column 0 the
/// batch index, row-major.
struct Coords {
  int64_t dims = 0;
  std::vector<int32_t> data;

  Coords() = default;
  explicit Coords(int64_t dims) : dims(dims) {}

  int64_t rows() const {
    return static_cast<int64_t>(data.size()) / (dims + 1);
  }
  int32_t at(int64_t row, int64_t col) const {
    return data[row * (dims + 1) + col];
  }
  /// Row `row` as (batch, x0, x1, ...).
  std::vector<int32_t> site(int64_t row) const {
    return std::vector<int32_t>(data.begin() + row * (dims + 1),
                                data.begin() + (row + 1) * (dims + 1));
  }
  void append(const std::vector<int32_t> &site) {
    data.insert(data.end(), site.begin(), site.end());
  }
};

//===----------------------------------------------------------------------===//
// Geometry
//===----------------------------------------------------------------------===//

enum class ConvKind { Subm, Regular, Transposed, Inverse };

/// The window of a convolution, per spatial dimension; the fields of
/// `#spconv.geom`. Empty lists mean the defaults (see normalizeGeometry).
struct Geometry {
  ConvKind kind = ConvKind::Regular;
  std::vector<int64_t> kernel;
  std::vector<int64_t> stride;
  std::vector<int64_t> padding;
  std::vector<int64_t> dilation;
  std::vector<int64_t> outputPadding;

  int64_t rank() const { return static_cast<int64_t>(kernel.size()); }
};

const char *convKindName(ConvKind kind);
bool parseConvKind(const std::string &name, ConvKind &kind);

/// Fills defaulted lists (stride 1, dilation 1, output padding 0, padding 0
/// or `kernel / 2 * dilation` for subm) and checks the constraints of
/// `#spconv.geom`: 1 to 4 dims, every list of that rank, kernel, stride and
/// dilation positive, padding and output padding nonnegative, subm with
/// stride 1 and its implied padding, output padding only for transposed and
/// smaller than the stride or the dilation of its dimension.
bool normalizeGeometry(Geometry &geometry, std::string &error);

/// prod(kernel).
int64_t kernelVolume(const Geometry &geometry);

/// Row-major kernel index of flat offset `offset`: `j0*k1*k2 + j1*k2 + j2`.
std::vector<int64_t> kernelIndex(const Geometry &geometry, int64_t offset);
/// Row-major multi-index of `flat` in `extents`.
std::vector<int64_t> rowMajorIndex(int64_t flat,
                                  const std::vector<int64_t> &extents);

/// Checks a spatial grid: rank 1..4, positive extents of at most 2^31
/// (coordinates are int32), volume within int64.
bool checkGrid(const std::vector<int64_t> &grid, std::string &error);

/// The output grid of `geometry` (normalized) on input grid `grid`:
/// subm: O = I; regular and inverse (the forward conv's output, i.e. the
/// grid of the inverse conv's source sites): floor((I + 2p - d(k-1) - 1)/s)
/// + 1; transposed: (I - 1)s - 2p + d(k-1) + op + 1. Fails if an extent
/// would be empty or not fit a coordinate.
bool outputGrid(const Geometry &geometry, const std::vector<int64_t> &grid,
                std::vector<int64_t> &out, std::string &error);

/// Checks sites against a grid: `dims` equal to the grid's rank, batch
/// nonnegative, spatial coordinates in [0, S), no two rows at one site, and
/// every key `((b * S0 + x0) * S1 + x1) ...` within int64. `what` names the
/// argument in messages.
bool checkCoords(const Coords &coords, const std::vector<int64_t> &grid,
                 const std::string &what, std::string &error);

//===----------------------------------------------------------------------===//
// Rulebook, convolution, pooling
//===----------------------------------------------------------------------===//

struct Pair {
  int64_t in;  // row of the input sites
  int64_t out; // row of the output sites
  bool operator==(const Pair &o) const { return in == o.in && out == o.out; }
};

/// The pairs of every kernel offset and the output sites.
struct Rulebook {
  std::vector<int64_t> outGrid;
  /// subm: the input sites in input order; otherwise sorted by key.
  Coords outCoords;
  /// pairs[j]: the pairs of kernel offset j, sorted by (in, out).
  std::vector<std::vector<Pair>> pairs;

  int64_t numPairs() const;
};

/// Builds the rulebook of a subm, regular or transposed geometry over the
/// sites `coords` of grid `grid`.
bool buildRulebook(const Geometry &geometry, const std::vector<int64_t> &grid,
                   const Coords &coords, Rulebook &rulebook,
                   std::string &error);

/// subm / regular / transposed sparse convolution:
/// out[o] = sum over pairs (x -> o, j) of in[x] @ weight[j] (+ bias).
/// `features` is N x Cin, `weight` K x Cin x Cout, `bias` (may be null)
/// Cout.
bool sparseConv(const Geometry &geometry, const std::vector<int64_t> &grid,
                const Coords &coords, const Tensor &features,
                const Tensor &weight, const Tensor *bias, Coords &outCoords,
                Tensor &outFeatures, std::string &error);

/// Inverse conv: the transpose of the rulebook of the regular conv with this
/// window (kind Inverse or Regular) over the fine sites `coords` on `grid`.
/// `sourceCoords` (any order) are sites on that conv's output grid holding
/// `features`; each of the forward conv's output sites must be among them
/// (other source sites take part in no pair and are ignored). Result: one row
/// per fine site, out[x] = sum over pairs (x -> o, j) of in[o] @ weight[j]
/// (+ bias).
bool inverseConv(const Geometry &geometry, const std::vector<int64_t> &grid,
                 const Coords &coords, const Coords &sourceCoords,
                 const Tensor &features, const Tensor &weight,
                 const Tensor *bias, Tensor &outFeatures, std::string &error);

enum class PoolMode { Max, Avg };

/// Pooling over the regular-conv rulebook of `geometry` (kind Regular): the
/// channel-wise max, or mean over the contributing input sites, of each
/// active output. Max treats NaN as greater than every number (as
/// segment_max does), so a NaN input propagates.
bool sparsePool(PoolMode mode, const Geometry &geometry,
                const std::vector<int64_t> &grid, const Coords &coords,
                const Tensor &features, Coords &outCoords, Tensor &outFeatures,
                std::string &error);

//===----------------------------------------------------------------------===//
// Dense primitives
//===----------------------------------------------------------------------===//

/// PyTorch's nn.functional.unfold over 1..4 spatial dims, using the kernel,
/// stride, padding and dilation of `geometry`: `N x C x S...` to
/// `N x (C*K) x L`; row c*K + j holds channel c at kernel offset j, column l
/// the l-th window position in row-major order over the regular-conv output
/// grid; positions outside the input read 0.
bool unfold(const Geometry &geometry, const Tensor &input, Tensor &output,
            std::string &error);

/// PyTorch's nn.functional.fold, the adjoint of unfold: `N x (C*K) x L` to
/// `N x C x outputSize...`, summing overlapping contributions and dropping
/// padded positions. L must be the number of window positions of
/// `outputSize`.
bool fold(const Geometry &geometry, const std::vector<int64_t> &outputSize,
          const Tensor &input, Tensor &output, std::string &error);

/// segment_max: `data` B x C x P, `index` B x P (row-major) with values in
/// [0, numSegments). values[b, c, m] is the max of data[b, c, p] over the p
/// with index[b, p] == m, positions[b, c, m] the smallest such p attaining
/// it; NaN is greater than every number; an empty segment gives value 0 and
/// position -1.
bool segmentMax(const Tensor &data, const std::vector<int64_t> &index,
                int64_t numSegments, Tensor &values,
                std::vector<int32_t> &positions, std::string &error);

} // namespace ref
} // namespace spconv

#endif // SPCONV_REF_REFERENCE_H

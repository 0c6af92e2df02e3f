//===- Geometry.cpp - Convolution windows and grids -----------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "spconv-ref/Reference.h"

#include <limits>

using namespace spconv::ref;

// Coordinates are int32, so no grid extent may exceed 2^31.
static constexpr int64_t kMaxExtent = int64_t(1) << 31;

const char *spconv::ref::convKindName(ConvKind kind) {
  switch (kind) {
  case ConvKind::Subm:
    return "subm";
  case ConvKind::Regular:
    return "regular";
  case ConvKind::Transposed:
    return "transposed";
  case ConvKind::Inverse:
    return "inverse";
  }
  return "?";
}

bool spconv::ref::parseConvKind(const std::string &name, ConvKind &kind) {
  for (ConvKind k : {ConvKind::Subm, ConvKind::Regular, ConvKind::Transposed,
                     ConvKind::Inverse}) {
    if (name == convKindName(k)) {
      kind = k;
      return true;
    }
  }
  return false;
}

static std::string listToString(const std::vector<int64_t> &list) {
  std::string s = "[";
  for (size_t i = 0; i < list.size(); ++i)
    s += (i ? ", " : "") + std::to_string(list[i]);
  return s + "]";
}

bool spconv::ref::normalizeGeometry(Geometry &g, std::string &error) {
  int64_t rank = g.rank();
  if (rank < 1 || rank > 4) {
    error = "kernel must have 1 to 4 dimensions, got " + std::to_string(rank);
    return false;
  }
  if (g.stride.empty())
    g.stride.assign(rank, 1);
  if (g.dilation.empty())
    g.dilation.assign(rank, 1);
  if (g.outputPadding.empty())
    g.outputPadding.assign(rank, 0);
  // subm's window is centred on the site: padding kernel/2 * dilation.
  std::vector<int64_t> implied(rank, 0);
  if (g.kind == ConvKind::Subm &&
      static_cast<int64_t>(g.dilation.size()) == rank)
    for (int64_t i = 0; i < rank; ++i)
      implied[i] = g.kernel[i] / 2 * g.dilation[i];
  if (g.padding.empty())
    g.padding = implied;

  struct Field {
    const char *name;
    const std::vector<int64_t> &list;
    int64_t minimum;
  } fields[] = {{"kernel", g.kernel, 1},
                {"stride", g.stride, 1},
                {"dilation", g.dilation, 1},
                {"padding", g.padding, 0},
                {"output padding", g.outputPadding, 0}};
  for (const Field &f : fields) {
    if (static_cast<int64_t>(f.list.size()) != rank) {
      error = std::string(f.name) + " has " + std::to_string(f.list.size()) +
              " entries, the kernel " + std::to_string(rank);
      return false;
    }
    for (int64_t v : f.list) {
      if (v < f.minimum || v > kMaxExtent) {
        error = std::string(f.name) + " " + listToString(f.list) + " must be " +
                (f.minimum ? "positive" : "nonnegative") + " and at most 2^31";
        return false;
      }
    }
  }
  // Weights are K x Cin x Cout; keep K (and its products) well inside int64.
  int64_t volume = 1;
  for (int64_t k : g.kernel) {
    volume *= k;
    if (volume > kMaxExtent) {
      error =
          "kernel " + listToString(g.kernel) + " has more than 2^31 offsets";
      return false;
    }
  }
  if (g.kind == ConvKind::Subm) {
    if (g.stride != std::vector<int64_t>(rank, 1)) {
      error = "subm conv must have stride 1, got " + listToString(g.stride);
      return false;
    }
    if (g.padding != implied) {
      error = "subm conv padding is implied as kernel/2*dilation = " +
              listToString(implied) + ", got " + listToString(g.padding);
      return false;
    }
  }
  for (int64_t i = 0; i < rank; ++i) {
    int64_t op = g.outputPadding[i];
    if (op == 0)
      continue;
    if (g.kind != ConvKind::Transposed) {
      error = "output padding is only allowed for transposed conv";
      return false;
    }
    if (op >= g.stride[i] && op >= g.dilation[i]) {
      error = "output padding " + std::to_string(op) + " in dim " +
              std::to_string(i) + " must be smaller than the stride (" +
              std::to_string(g.stride[i]) + ") or the dilation (" +
              std::to_string(g.dilation[i]) + ")";
      return false;
    }
  }
  return true;
}

int64_t spconv::ref::kernelVolume(const Geometry &g) {
  int64_t volume = 1;
  for (int64_t k : g.kernel)
    volume *= k;
  return volume;
}

std::vector<int64_t>
spconv::ref::rowMajorIndex(int64_t flat, const std::vector<int64_t> &extents) {
  std::vector<int64_t> index(extents.size());
  for (int64_t i = static_cast<int64_t>(extents.size()) - 1; i >= 0; --i) {
    index[i] = flat % extents[i];
    flat /= extents[i];
  }
  return index;
}

std::vector<int64_t> spconv::ref::kernelIndex(const Geometry &g,
                                              int64_t offset) {
  return rowMajorIndex(offset, g.kernel);
}

bool spconv::ref::checkGrid(const std::vector<int64_t> &grid,
                            std::string &error) {
  if (grid.empty() || grid.size() > 4) {
    error =
        "grid must have 1 to 4 dimensions, got " + std::to_string(grid.size());
    return false;
  }
  int64_t volume = 1;
  for (int64_t s : grid) {
    if (s < 1 || s > kMaxExtent) {
      error = "grid " + listToString(grid) + " must have extents in [1, 2^31]";
      return false;
    }
    if (volume > std::numeric_limits<int64_t>::max() / s) {
      error = "grid " + listToString(grid) + " has a volume past int64";
      return false;
    }
    volume *= s;
  }
  return true;
}

bool spconv::ref::outputGrid(const Geometry &g,
                             const std::vector<int64_t> &grid,
                             std::vector<int64_t> &out, std::string &error) {
  if (!checkGrid(grid, error))
    return false;
  if (static_cast<int64_t>(grid.size()) != g.rank()) {
    error = "grid has " + std::to_string(grid.size()) +
            " dimensions, the kernel " + std::to_string(g.rank());
    return false;
  }
  out.assign(grid.size(), 0);
  for (int64_t i = 0; i < g.rank(); ++i) {
    // 128-bit so that no parameter combination overflows.
    __int128 I = grid[i], k = g.kernel[i], s = g.stride[i], p = g.padding[i],
             d = g.dilation[i], op = g.outputPadding[i], O = 0;
    switch (g.kind) {
    case ConvKind::Subm:
      O = I;
      break;
    case ConvKind::Regular:
    case ConvKind::Inverse: {
      __int128 span = I + 2 * p - d * (k - 1) - 1;
      O = span < 0 ? 0 : span / s + 1;
      break;
    }
    case ConvKind::Transposed:
      O = (I - 1) * s - 2 * p + d * (k - 1) + op + 1;
      break;
    }
    if (O < 1 || O > kMaxExtent) {
      error = std::string(convKindName(g.kind)) + " conv output grid is " +
              (O < 1 ? "empty" : "larger than 2^31") + " in dim " +
              std::to_string(i) + " (input extent " + std::to_string(grid[i]) +
              ")";
      return false;
    }
    out[i] = static_cast<int64_t>(O);
  }
  return checkGrid(out, error);
}

//===- LidarKeys.h - Deterministic LiDAR-like coordinate keys ---*- C++ -*-===//
//
// Test and benchmark data: voxels of a KITTI-sized grid [41, 1600, 1408]
// (z, y, x) lying on a ground sheet two voxels thick and on vertical walls,
// with a density that falls off with the distance from the sensor at
// (y = 800, x = 0), like a real scan. Keys are unique by construction (walls
// sit above the ground layers and never cross), shuffled, and depend only on
// (n, seed).
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_RT_TEST_LIDARKEYS_H
#define SPCONV_RT_TEST_LIDARKEYS_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace spconv_rt_test {

constexpr int64_t kGridZ = 41, kGridY = 1600, kGridX = 1408;

inline uint64_t splitmix(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline int64_t lidarKey(int64_t b, int64_t z, int64_t y, int64_t x) {
  return ((b * kGridZ + z) * kGridY + y) * kGridX + x;
}

struct LidarScene {
  int64_t batchSize = 1;
  std::vector<int64_t> keys; // unique, shuffled
};

/// Ground height and wall height at a column (0 = no wall).
inline void columnShape(int64_t y, int64_t x, int64_t *ground,
                        int64_t *wall) {
  *ground = 6 + (x / 300 + (y / 400) % 2) % 4;
  // Walls: facades at fixed x, each spanning a y interval.
  static const int64_t wallX[] = {97, 230, 411, 640, 877, 1150, 1333};
  *wall = 0;
  for (int w = 0; w < 7; ++w)
    if (x == wallX[w] && (y / 170 + w) % 3 != 0)
      *wall = 10 + 3 * w % 7;
}

/// `n` unique keys; the batch size grows with n so that density stays
/// LiDAR-like (about 1.5M sites per sample at most).
inline LidarScene makeLidarScene(int64_t n, uint64_t seed = 1) {
  LidarScene scene;
  scene.batchSize = std::max<int64_t>(1, (n + 1499999) / 1500000);
  // Relative density per column and voxel count per column.
  std::vector<float> weight(kGridY * kGridX);
  std::vector<uint8_t> voxels(kGridY * kGridX);
  for (int64_t y = 0; y < kGridY; ++y)
    for (int64_t x = 0; x < kGridX; ++x) {
      double dy = double(y - 800), dx = double(x);
      double r2 = (dy * dy + dx * dx) / (40.0 * 40.0);
      int64_t ground, wall;
      columnShape(y, x, &ground, &wall);
      weight[y * kGridX + x] = float(1.0 / (1.0 + r2));
      voxels[y * kGridX + x] = uint8_t(2 + wall);
    }
  // Scale c so that the expected count is ~15% above n.
  auto expected = [&](double c) {
    double total = 0;
    for (size_t i = 0; i < weight.size(); ++i)
      total += std::min(1.0, c * weight[i]) * voxels[i];
    return total * double(scene.batchSize);
  };
  double lo = 0, hi = 1;
  while (expected(hi) < 1.15 * double(n) && hi < 1e9)
    hi *= 2;
  for (int it = 0; it < 30; ++it) {
    double mid = 0.5 * (lo + hi);
    (expected(mid) < 1.15 * double(n) ? lo : hi) = mid;
  }
  double c = hi;
  uint64_t state = seed;
  for (int attempt = 0; attempt < 8; ++attempt) {
    scene.keys.clear();
    for (int64_t b = 0; b < scene.batchSize; ++b)
      for (int64_t y = 0; y < kGridY; ++y)
        for (int64_t x = 0; x < kGridX; ++x) {
          double p = std::min(1.0, c * weight[y * kGridX + x]);
          uint64_t threshold = uint64_t(p * 18446744073709551615.0);
          int64_t ground, wall;
          columnShape(y, x, &ground, &wall);
          for (int64_t z = ground; z < ground + 2; ++z)
            if (p >= 1.0 || splitmix(state) < threshold)
              scene.keys.push_back(lidarKey(b, z, y, x));
          for (int64_t z = ground + 2; z < std::min(ground + 2 + wall, kGridZ);
               ++z)
            if (p >= 1.0 || splitmix(state) < threshold)
              scene.keys.push_back(lidarKey(b, z, y, x));
        }
    if (int64_t(scene.keys.size()) >= n)
      break;
    c *= 1.5;
  }
  // Fisher-Yates shuffle, then keep n keys.
  for (size_t i = scene.keys.size(); i > 1; --i)
    std::swap(scene.keys[i - 1], scene.keys[splitmix(state) % i]);
  if (int64_t(scene.keys.size()) > n)
    scene.keys.resize(static_cast<size_t>(n));
  return scene;
}

/// The 27 neighbour keys (3x3x3 window) of every key that lie in the grid,
/// like the searches of a submanifold 3x3x3 convolution.
inline std::vector<int64_t> subm27Queries(const std::vector<int64_t> &keys) {
  std::vector<int64_t> queries;
  queries.reserve(keys.size() * 27);
  for (int64_t key : keys) {
    int64_t x = key % kGridX, y = (key / kGridX) % kGridY,
            z = (key / (kGridX * kGridY)) % kGridZ,
            b = key / (kGridX * kGridY * kGridZ);
    for (int64_t dz = -1; dz <= 1; ++dz)
      for (int64_t dy = -1; dy <= 1; ++dy)
        for (int64_t dx = -1; dx <= 1; ++dx) {
          int64_t zz = z + dz, yy = y + dy, xx = x + dx;
          if (zz < 0 || zz >= kGridZ || yy < 0 || yy >= kGridY || xx < 0 ||
              xx >= kGridX)
            continue;
          queries.push_back(lidarKey(b, zz, yy, xx));
        }
  }
  return queries;
}

} // namespace spconv_rt_test

#endif // SPCONV_RT_TEST_LIDARKEYS_H

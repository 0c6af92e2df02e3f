#!/usr/bin/env python3
# ===- gen_workload.py - Synthetic sparse-conv workloads ------------------=== #
#
# Part of the spconv-mlir project.
#
# ===----------------------------------------------------------------------=== #
"""Deterministic synthetic voxel workloads for the spconv-mlir benchmarks.

Modes:
  lidar    a 64-beam spinning LiDAR (HDL-64-like) ray-cast against a
           synthetic street, voxelised to the KITTI or nuScenes grid;
           several sweeps along the ego path are accumulated to reach --sites
  indoor   a room scanned at 2 cm: floor, walls, optional ceiling, furniture
  uniform  independent uniform random sites (about 1 active site per window)

Writes OUT_coords.npy (int32 [N, 4], rows (batch, z, y, x), unique, sorted by
key) and OUT_features.npy (float32 [N, C]). Needs only numpy; no downloads.
See bench/README.md for the method and its knobs.
"""

import argparse
import math
import sys
import time

import numpy as np

# Grids: (name -> dims (z, y, x), lower corner (x, y, z), voxel size (x, y, z)).
# The z extent is one more than the cells the range covers, as SECOND and
# CenterPoint pad it (40 cells of 0.1 m / 0.2 m in a 41-high grid).
GRIDS = {
    "kitti": ((41, 1600, 1408), (0.0, -40.0, -3.0), (0.05, 0.05, 0.1),
              (70.4, 40.0, 1.0)),
    "nuscenes": ((41, 1440, 1440), (-54.0, -54.0, -5.0), (0.075, 0.075, 0.2),
                 (54.0, 54.0, 3.0)),
}

SENSOR_HEIGHT = 1.73  # KITTI's Velodyne mount height above the road.


# ===----------------------------------------------------------------------=== #
# Keys and neighbour statistics
# ===----------------------------------------------------------------------=== #

def linear_keys(coords, dims):
    """DESIGN.md's 64-bit key ((b*D + z)*H + y)*W + x."""
    d, h, w = dims
    c = coords.astype(np.int64)
    return ((c[:, 0] * d + c[:, 1]) * h + c[:, 2]) * w + c[:, 3]


def window_counts(coords, dims):
    """Active sites in the 3x3x3 window of every site (centre included).

    The sum over all sites is the pair count of a 3x3x3 submanifold conv.
    """
    keys = linear_keys(coords, dims)
    order = np.argsort(keys, kind="stable")
    skeys = keys[order]
    counts = np.zeros(len(keys), np.int64)
    zyx = coords[:, 1:].astype(np.int64)
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                nz, ny, nx = zyx[:, 0] + dz, zyx[:, 1] + dy, zyx[:, 2] + dx
                inside = ((nz >= 0) & (nz < dims[0]) & (ny >= 0) &
                          (ny < dims[1]) & (nx >= 0) & (nx < dims[2]))
                q = keys + (dz * dims[1] + dy) * dims[2] + dx
                pos = np.searchsorted(skeys, q)
                pos = np.minimum(pos, len(skeys) - 1)
                counts += inside & (skeys[pos] == q)
    return counts


def print_stats(coords, dims, label):
    counts = window_counts(coords, dims)
    n = len(coords)
    print(f"{label}: N {n}  grid [{dims[0]}, {dims[1]}, {dims[2]}]  "
          f"batch {int(coords[:, 0].max()) + 1 if n else 0}")
    if n == 0:
        return
    print(f"  active sites per 3x3x3 window (incl. centre): mean "
          f"{counts.mean():.2f}  median {int(np.median(counts))}  "
          f"isolated {100.0 * np.mean(counts == 1):.1f} %")
    print(f"  subm 3x3x3 pairs {int(counts.sum())}")


# ===----------------------------------------------------------------------=== #
# Ray casting
# ===----------------------------------------------------------------------=== #

def hit_boxes(origin, dirs, boxes, best_t, best_id, first_id, max_range):
    """Slab test of every ray against axis-aligned boxes [lo, hi]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = [np.ascontiguousarray(1.0 / dirs[:, a]) for a in range(3)]
    for i, (lo, hi) in enumerate(boxes):
        # Boxes out of sensor range cannot be hit.
        if np.linalg.norm(np.maximum(np.maximum(lo - origin, origin - hi),
                                     0.0)) > max_range:
            continue
        tnear, tfar = None, None
        with np.errstate(invalid="ignore"):
            for a in range(3):
                t1 = (lo[a] - origin[a]) * inv[a]
                t2 = (hi[a] - origin[a]) * inv[a]
                lo_t, hi_t = np.minimum(t1, t2), np.maximum(t1, t2)
                tnear = lo_t if tnear is None else np.maximum(tnear, lo_t)
                tfar = hi_t if tfar is None else np.minimum(tfar, hi_t)
        hit = (tfar >= tnear) & (tnear > 0.0) & (tnear < best_t)
        best_t[hit] = tnear[hit]
        best_id[hit] = first_id + i


def hit_cylinders(origin, dirs, cyls, best_t, best_id, first_id):
    """Vertical cylinders (cx, cy, r, z0, z1): 2-D ray/circle, then z range."""
    a = dirs[:, 0] ** 2 + dirs[:, 1] ** 2
    for i, (cx, cy, r, z0, z1) in enumerate(cyls):
        ox, oy = origin[0] - cx, origin[1] - cy
        b = 2.0 * (dirs[:, 0] * ox + dirs[:, 1] * oy)
        c = ox * ox + oy * oy - r * r
        disc = b * b - 4.0 * a * c
        ok = disc > 0.0
        t = np.full(len(dirs), np.inf)
        t[ok] = (-b[ok] - np.sqrt(disc[ok])) / (2.0 * a[ok])
        z = origin[2] + t * dirs[:, 2]
        hit = ok & (t > 0.0) & (t < best_t) & (z >= z0) & (z <= z1)
        best_t[hit] = t[hit]
        best_id[hit] = first_id + i


def hdl64_elevations():
    """HDL-64E layout: upper block at 1/3 deg, lower block at 1/2 deg."""
    upper = 2.0 - np.arange(32) / 3.0
    lower = upper[-1] - 0.5 - 0.5 * np.arange(32)
    return np.concatenate([upper, lower])  # +2.0 .. -24.83 deg


class Street:
    """A straight street along world x: road, kerbs, facades, cars, poles."""

    def __init__(self, rng):
        ground = -SENSOR_HEIGHT
        road = rng.uniform(4.0, 7.5)       # half width of the road
        walk = rng.uniform(2.0, 4.5)       # sidewalk width
        self.ground = ground
        boxes, refl = [], []

        def box(lo, hi, r):
            boxes.append((np.array(lo, float), np.array(hi, float)))
            refl.append(r)

        x0, x1 = -80.0, 160.0
        for side in (-1.0, 1.0):
            # Raised sidewalk, 15 cm kerb.
            y_in, y_out = side * road, side * (road + walk)
            box([x0, min(y_in, y_out), ground],
                [x1, max(y_in, y_out), ground + 0.15], 0.30)
            # Facades: buildings with alleys between them, set back a little.
            x = x0
            while x < x1:
                length = rng.uniform(8.0, 35.0)
                if rng.random() < 0.85:
                    back = side * (road + walk + rng.uniform(0.0, 1.5))
                    depth = side * 8.0
                    height = rng.uniform(4.0, 16.0)
                    box([x, min(back, back + depth), ground],
                        [x + length, max(back, back + depth), ground + height],
                        rng.uniform(0.3, 0.6))
                x += length + (rng.uniform(1.0, 8.0) if rng.random() < 0.4
                               else 0.0)
            # Parked cars along the kerb, some gaps.
            x = x0 + rng.uniform(0.0, 5.0)
            while x < x1:
                length = rng.uniform(3.8, 4.9)
                if rng.random() < 0.7:
                    width = rng.uniform(1.65, 1.95)
                    yc = side * (road - 0.3 - width / 2)
                    lo_z = ground + 0.2  # ground clearance
                    box([x, yc - width / 2, lo_z],
                        [x + length, yc + width / 2,
                         ground + rng.uniform(1.4, 1.75)],
                        rng.uniform(0.4, 0.9))
                x += length + rng.uniform(0.6, 6.0)
        # A few cars in the traffic lanes, none on the ego position.
        for _ in range(rng.integers(2, 7)):
            xc = rng.uniform(8.0, 120.0) * (1 if rng.random() < 0.8 else -0.5)
            yc = rng.choice([-1.0, 1.0]) * rng.uniform(1.6, 2.2)
            box([xc, yc - 0.9, ground + 0.2], [xc + 4.5, yc + 0.9, ground + 1.6],
                rng.uniform(0.4, 0.9))
        self.boxes, self.box_refl = boxes, refl
        # Poles (street lights, signs) and tree trunks on the sidewalks.
        cyls = []
        for side in (-1.0, 1.0):
            x = x0 + rng.uniform(0.0, 10.0)
            while x < x1:
                r = rng.uniform(0.07, 0.25)
                yc = side * (road + rng.uniform(0.4, 1.0))
                cyls.append((x, yc, r, ground, ground + rng.uniform(3.0, 9.0)))
                x += rng.uniform(8.0, 25.0)
        self.cyls = cyls

    def cast(self, origin, dirs, max_range):
        n = len(dirs)
        best_t = np.full(n, max_range)
        best_id = np.full(n, -1, np.int64)
        # Ground plane.
        with np.errstate(divide="ignore", invalid="ignore"):
            tg = (self.ground - origin[2]) / dirs[:, 2]
        hit = (dirs[:, 2] < 0) & (tg < best_t)
        best_t[hit] = tg[hit]
        best_id[hit] = 0
        hit_boxes(origin, dirs, self.boxes, best_t, best_id, 1, max_range)
        hit_cylinders(origin, dirs, self.cyls, best_t, best_id,
                      1 + len(self.boxes))
        refl = np.concatenate([[0.2], self.box_refl,
                               np.full(len(self.cyls), 0.5)])
        valid = best_id >= 0
        return best_t[valid], refl[best_id[valid]], valid


def lidar_sweep(street, rng, pose, az_step):
    """One 360 deg scan from `pose` = (x, y, yaw) in street coordinates.

    Returns points in street coordinates (x, y, z), intensity.
    """
    elev = np.radians(hdl64_elevations())
    n_az = int(round(360.0 / az_step))
    # Each beam fires at a slightly different azimuth phase, as real heads do.
    az = (np.arange(n_az)[None, :] * az_step +
          rng.uniform(0.0, az_step, (64, 1)))
    az = np.radians(az).ravel() + pose[2]
    el = np.repeat(elev, n_az) + rng.normal(0.0, 2e-4, 64 * n_az)
    dirs = np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az),
                     np.sin(el)], 1)
    origin = np.array([pose[0], pose[1], 0.0])
    t, refl, valid = street.cast(origin, dirs, 100.0)
    dirs = dirs[valid]
    # Range noise, and dropouts that grow with range (weak far returns).
    t = t + rng.normal(0.0, 0.015, len(t))
    keep = rng.random(len(t)) > 0.03 + 0.25 * (t / 100.0) ** 2
    t, refl, dirs = t[keep], refl[keep], dirs[keep]
    pts = origin + t[:, None] * dirs
    inten = np.clip(refl * (0.4 + 0.6 * np.abs(dirs[:, 2]) + 0.6 *
                            np.exp(-t / 30.0)) +
                    rng.normal(0.0, 0.03, len(t)), 0.0, 1.0)
    return pts, inten


def voxelise(pts, grid):
    """Point -> (z, y, x) indices; mask of points inside the grid range."""
    dims, lo, size, hi = grid
    p = np.asarray(pts)
    idx = np.floor((p - np.array(lo)) / np.array(size)).astype(np.int64)
    inside = np.all((p >= np.array(lo)) & (p < np.array(hi)), axis=1)
    inside &= (idx[:, 0] < dims[2]) & (idx[:, 1] < dims[1]) & (
        idx[:, 2] < dims[0] - 1)
    return idx[:, ::-1], inside


def gen_lidar(seed, sites, grid_name, az_step, step):
    """One batch sample: accumulate sweeps until `sites` voxels (or 1 sweep).

    Returns (sorted voxel keys, each point's voxel key, point features
    [points, 5]: x, y, z, intensity, time lag; the number of sweeps).
    """
    grid = GRIDS[grid_name]
    dims = grid[0]
    rng = np.random.default_rng(seed)
    street = Street(rng)
    # Reference pose: where the ego is in the street, how it is turned.
    ref = np.array([rng.uniform(0.0, 20.0),
                    rng.uniform(-1.5, 1.5), np.radians(rng.uniform(-12, 12))])
    c, s = math.cos(-ref[2]), math.sin(-ref[2])
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    keys = np.zeros(0, np.int64)
    vox_of_point, feats = [], []
    sweep = 0
    while True:
        # The ego drives forward (+x of the street), drifting a little.
        pose = ref + np.array([sweep * step, rng.normal(0.0, 0.05),
                               rng.normal(0.0, np.radians(0.3))])
        pts, inten = lidar_sweep(street, rng, pose, az_step)
        local = (pts - np.array([ref[0], ref[1], 0.0])) @ rot.T
        zyx, inside = voxelise(local, grid)
        zyx, local, inten = zyx[inside], local[inside], inten[inside]
        k = (zyx[:, 0] * dims[1] + zyx[:, 1]) * dims[2] + zyx[:, 2]
        new = np.setdiff1d(np.unique(k), keys, assume_unique=True)
        lag = np.full(len(k), 0.05 * sweep)
        if sites and len(keys) + len(new) > sites:
            # Stop inside this sweep: narrow its field of view to the new
            # voxels closest to straight ahead (as KITTI crops to the camera
            # view), which keeps the local density of a full sweep.
            zyx_new = keys_to_zyx(new, dims)
            cx = grid[1][0] + (zyx_new[:, 2] + 0.5) * grid[2][0]
            cy = grid[1][1] + (zyx_new[:, 1] + 0.5) * grid[2][1]
            ahead = np.argsort(np.abs(np.arctan2(cy, cx)), kind="stable")
            new = np.sort(new[ahead[:sites - len(keys)]])
            take = np.isin(k, new) | np.isin(k, keys)
            k, local, inten, lag = k[take], local[take], inten[take], lag[take]
        keys = np.union1d(keys, new)
        vox_of_point.append(k)
        feats.append(np.column_stack([local, inten, lag]))
        sweep += 1
        if not sites or len(keys) >= sites:
            break
        if sweep >= 200:
            print(f"warning: seed {seed}: {len(keys)} sites after {sweep} "
                  f"sweeps, short of {sites}", file=sys.stderr)
            break
    k = np.concatenate(vox_of_point)
    f = np.concatenate(feats)
    return keys, k, f, sweep


def mean_features(keys, point_keys, point_feats):
    """Voxel features = mean over the points that fell into the voxel."""
    inv = np.searchsorted(keys, point_keys)
    cnt = np.bincount(inv, minlength=len(keys)).astype(np.float64)
    out = np.empty((len(keys), point_feats.shape[1]))
    for j in range(point_feats.shape[1]):
        out[:, j] = np.bincount(inv, point_feats[:, j], len(keys)) / cnt
    return out


# ===----------------------------------------------------------------------=== #
# Indoor
# ===----------------------------------------------------------------------=== #

def rect_points(p0, u, v, spacing, rng):
    """Points on the parallelogram p0 + a u + b v, jittered, a, b in [0, 1)."""
    nu = max(1, int(np.linalg.norm(u) / spacing))
    nv = max(1, int(np.linalg.norm(v) / spacing))
    a = (np.arange(nu)[:, None] + rng.random((nu, nv))) / nu
    b = (np.arange(nv)[None, :] + rng.random((nu, nv))) / nv
    return p0 + a.reshape(-1, 1) * u + b.reshape(-1, 1) * v


def box_faces(centre, size, yaw, bottom):
    """Faces of a box turned by `yaw` about z, as (p0, u, v); no bottom face
    unless `bottom` (a table top is seen from below, a cabinet is not)."""
    c, s = math.cos(yaw), math.sin(yaw)
    ex = np.array([c, s, 0.0]) * size[0]
    ey = np.array([-s, c, 0.0]) * size[1]
    ez = np.array([0.0, 0.0, size[2]])
    o = centre - ex / 2 - ey / 2
    faces = [(o + ez, ex, ey), (o, ex, ez), (o + ey, ex, ez), (o, ey, ez),
             (o + ex, ey, ez)]
    if bottom:
        faces.append((o, ex, ey))
    return faces


def gen_room(rng, scale):
    """Surface rectangles of one room; `scale` stretches its floor plan."""
    # At least 2.4 m a side, so that furniture fits (small --sites shrink
    # the room).
    lx = max(rng.uniform(5.0, 9.0) * scale, 2.4)
    ly = max(rng.uniform(4.0, 7.0) * scale, 2.4)
    hz = rng.uniform(2.5, 3.2)
    o = np.zeros(3)
    ex, ey, ez = np.array([lx, 0, 0]), np.array([0, ly, 0]), np.array([0, 0, hz])
    faces = [(o, ex, ey), (o, ex, ez), (o + ey, ex, ez), (o, ey, ez),
             (o + ex, ey, ez)]
    if rng.random() < 0.5:
        faces.append((o + ez, ex, ey))  # ceiling
    n_items = int(rng.integers(4, 9) * scale * scale) + 2
    for _ in range(n_items):
        kind = rng.integers(0, 3)
        yaw = rng.uniform(0.0, math.pi)
        pos = np.array([rng.uniform(0.8, lx - 0.8), rng.uniform(0.8, ly - 0.8),
                        0.0])
        if kind == 0:  # table: top slab and legs
            size = np.array([rng.uniform(0.8, 2.0), rng.uniform(0.6, 1.0),
                             0.04])
            top = pos + np.array([0, 0, rng.uniform(0.7, 0.78)])
            faces += box_faces(top, size, yaw, True)
            for dx in (-0.45, 0.45):
                for dy in (-0.45, 0.45):
                    c, s = math.cos(yaw), math.sin(yaw)
                    off = np.array([c * dx * size[0] - s * dy * size[1],
                                    s * dx * size[0] + c * dy * size[1], 0])
                    faces += box_faces(pos + off, [0.05, 0.05, top[2]], yaw,
                                       False)
        elif kind == 1:  # cabinet / shelf
            size = np.array([rng.uniform(0.5, 2.0), rng.uniform(0.35, 0.6),
                             rng.uniform(0.8, 2.1)])
            faces += box_faces(pos, size, yaw, False)
        else:  # chair or sofa: seat and back
            w = rng.uniform(0.45, 2.0)
            faces += box_faces(pos, [w, 0.5, 0.45], yaw, False)
            c, s = math.cos(yaw), math.sin(yaw)
            back = pos + np.array([s * 0.22, -c * 0.22, 0.45])
            faces += box_faces(back, [w, 0.08, 0.45], yaw, False)
    return faces, np.array([lx, ly, hz])


def gen_indoor(seed, sites, voxel):
    """One room scan at `voxel` metres; the room is scaled to hit `sites`."""
    scale = 1.0
    for _ in range(5):
        rng = np.random.default_rng(seed)
        faces, extent = gen_room(rng, scale)
        pts = np.concatenate([rect_points(p0, u, v, voxel / 2, rng)
                              for p0, u, v in faces])
        # Depth-sensor noise.
        pts = pts + rng.normal(0.0, voxel / 6, pts.shape)
        # Unscanned patches: drop points in a few random spheres.
        for _ in range(rng.integers(3, 8)):
            c = rng.random(3) * extent
            pts = pts[np.linalg.norm(pts - c, axis=1) > rng.uniform(0.2, 0.6)]
        pts -= pts.min(axis=0)
        zyx = np.floor(pts[:, ::-1] / voxel).astype(np.int64)
        dims = tuple(int(d) + 1 for d in zyx.max(axis=0))
        k = (zyx[:, 0] * dims[1] + zyx[:, 1]) * dims[2] + zyx[:, 2]
        keys = np.unique(k)
        # Aim a little above the target, then trim: the floor plan scales
        # the surface area (and the site count) roughly quadratically.
        if not sites or sites <= len(keys) <= 1.08 * sites:
            break
        scale *= math.sqrt(1.04 * sites / len(keys))
    if sites and len(keys) > sites:
        # Trim the sites farthest from the room centre (the scan's edge).
        zyx_k = keys_to_zyx(keys, dims)
        centre = np.array(dims) / 2.0
        dist = np.linalg.norm((zyx_k - centre)[:, 1:], axis=1)
        keep = np.sort(keys[np.argsort(dist, kind="stable")[:sites]])
        take = np.isin(k, keep)
        keys, k, pts = keep, k[take], pts[take]
    inten = 0.5 + 0.3 * np.sin(pts[:, 0] * 3.0) * np.cos(pts[:, 1] * 2.0)
    return keys, k, np.column_stack([pts, inten]), dims


# ===----------------------------------------------------------------------=== #
# Uniform
# ===----------------------------------------------------------------------=== #

def gen_uniform(seed, sites, dims):
    rng = np.random.default_rng(seed)
    vol = dims[0] * dims[1] * dims[2]
    if sites > vol:
        sys.exit(f"error: {sites} sites do not fit in a grid of {vol}")
    keys = np.zeros(0, np.int64)
    while len(keys) < sites:
        draw = rng.integers(0, vol, int((sites - len(keys)) * 1.1) + 16)
        keys = np.union1d(keys, draw)
    keys = np.sort(rng.choice(keys, sites, replace=False))
    return keys


# ===----------------------------------------------------------------------=== #
# Driver
# ===----------------------------------------------------------------------=== #

def keys_to_zyx(keys, dims):
    z = keys // (dims[1] * dims[2])
    y = (keys // dims[2]) % dims[1]
    x = keys % dims[2]
    return np.stack([z, y, x], 1)


def finish_features(feats, channels, rng):
    """First columns as generated; more columns are seeded N(0, 1) noise."""
    n = len(feats)
    out = np.zeros((n, channels), np.float32)
    m = min(channels, feats.shape[1])
    out[:, :m] = feats[:, :m]
    if channels > m:
        out[:, m:] = rng.standard_normal((n, channels - m))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["lidar", "indoor", "uniform"])
    ap.add_argument("out", help="output prefix: OUT_coords.npy, "
                    "OUT_features.npy")
    ap.add_argument("--sites", type=int, default=0,
                    help="sites per batch sample (lidar: default one sweep; "
                    "indoor: default one room at scale 1; uniform: required "
                    "unless --density)")
    ap.add_argument("--grid", choices=sorted(GRIDS), default="kitti",
                    help="lidar and uniform grid (default kitti)")
    ap.add_argument("--density", type=float, default=0.0,
                    help="uniform: fraction of the grid that is active")
    ap.add_argument("--batch", type=int, default=1, choices=[1, 2, 3, 4])
    ap.add_argument("--channels", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--az-step", type=float, default=0.16,
                    help="lidar azimuth step in degrees (default 0.16)")
    ap.add_argument("--ego-step", type=float, default=0.5,
                    help="lidar ego motion between sweeps in metres")
    ap.add_argument("--voxel", type=float, default=0.02,
                    help="indoor voxel size in metres (default 0.02)")
    args = ap.parse_args(argv)
    if args.channels < 1:
        ap.error("--channels must be positive")

    start = time.time()
    all_zyx, all_feats, all_b = [], [], []
    dims = GRIDS[args.grid][0]
    notes = []
    for b in range(args.batch):
        seed = args.seed * 1000 + b  # a different scene per batch sample
        if args.mode == "lidar":
            keys, pk, pf, sweeps = gen_lidar(seed, args.sites, args.grid,
                                             args.az_step, args.ego_step)
            feats = mean_features(keys, pk, pf)
            notes.append(f"sample {b}: {len(keys)} sites from {sweeps} "
                         f"sweep(s), {len(pk)} points")
        elif args.mode == "indoor":
            keys, pk, pf, room = gen_indoor(seed, args.sites, args.voxel)
            feats = mean_features(keys, pk, pf)
            # All samples share one grid: the largest room's.
            dims = room if b == 0 else tuple(max(a, c) for a, c in
                                             zip(dims, room))
            all_zyx.append(keys_to_zyx(keys, room))
            all_feats.append(feats)
            all_b.append(np.full(len(keys), b))
            continue
        else:
            n = args.sites or int(round(args.density * np.prod(dims)))
            if n <= 0:
                ap.error("uniform needs --sites or --density")
            keys = gen_uniform(seed, n, dims)
            zyx = keys_to_zyx(keys, dims)
            size = np.array(GRIDS[args.grid][2])
            lo = np.array(GRIDS[args.grid][1])
            xyz = lo + (zyx[:, ::-1] + 0.5) * size
            feats = np.column_stack([xyz, np.full(len(keys), 0.5)])
        all_zyx.append(keys_to_zyx(keys, dims))
        all_feats.append(feats)
        all_b.append(np.full(len(keys), b))

    coords = np.column_stack([np.concatenate(all_b),
                              np.concatenate(all_zyx)]).astype(np.int32)
    feats = np.concatenate(all_feats)
    order = np.argsort(linear_keys(coords, dims), kind="stable")
    coords, feats = coords[order], feats[order]
    feats = finish_features(feats, args.channels,
                            np.random.default_rng(args.seed + 7919))
    np.save(args.out + "_coords.npy", coords)
    np.save(args.out + "_features.npy", feats)
    for note in notes:
        print(note)
    print_stats(coords, dims, f"{args.mode} seed {args.seed}")
    print(f"wrote {args.out}_coords.npy {list(coords.shape)} and "
          f"{args.out}_features.npy {list(feats.shape)} in "
          f"{time.time() - start:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

# Feeds bench/run.py's report functions the figures a tiny or noisy run can
# produce (see degenerate-figures.test).
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench"))
import run  # noqa: E402

print("ratios")
print(run.ratio(1.0, 0.0), run.ratio(0.0, 0.0), run.ratio(-1.0, 0.0), run.ratio(3.0, 2.0))

# Two points where the larger input took less time (the -1.51 of a fresh
# clone), and compute times of 0 ms.
scaling = []
for sites, e2e, compute, pairs, k, rss in ((1000, 2.0, 0.0, 100, 3, 5.0),
                                          (2000, 0.7, 0.0, 200, 3, 6.0),
                                          (1000, 2.0, 0.0, 200, 5, 5.0),
                                          (2000, 0.7, 0.5, 400, 5, 6.0)):
    scaling.append({"series": "scan", "batch": 1, "sites": sites, "k": k, "threads": 1,
                    "pairs": pairs, "build_ms": e2e - compute, "compute_ms": compute,
                    "e2e_ms": e2e, "rss_mib": rss})
fits = run.fit_scaling(scaling)
f = fits[0]
print("fits")
print("e2e %.2f build %.2f compute %.2f pairs %.2f rss/100k %.1f at 0 %.1f" % (
    f["e2e_ms_exponent"], f["build_ms_exponent"], f["compute_ms_exponent"],
    f["pairs_exponent"], f["rss_mib_per_100k"], f["rss_mib_at_0"]))
one = run.fit_scaling([dict(r, sites=1000) for r in scaling])
print("one site count: %.2f %.2f" % (one[0]["e2e_ms_exponent"], one[0]["rss_mib_at_0"]))

sweep = [{"workload": "lidar_2000", "threads": 1, "cin": 64, "cout": 64, "k": 3,
          "pairs": 100, "build_ms": 0.0, "compute_ms": 0.0, "e2e_ms": 0.0,
          "gflops": run.ratio(2.0 * 100 * 64 * 64, 0.0) * 1e-6, "rss_mib": 5.0,
          "v1_rulebook_ms": 1.0, "merge_join_ms": 0.0, "v1_conv_ms": 0.0, "v1_total_ms": 0.0,
          "v1_conv_gflops": float("nan"), "v1_rss_mib": 5.0, "sgemm_best_ms": 0.0,
          "sgemm_best_gflops": 0.0, "dense_ms": 0.0, "dense_gflops": 0.0,
          "dense_projected": False, "first_ms": 0.0, "compile_ms": 0.0,
          "v1_first_ms": 0.0, "sgemm_first_ms": 0.0, "peak_gflops": 0.0,
          "flop_bound_ms": float("inf"), "bytes": 0.0, "read_gbs": 0.0, "write_gbs": 0.0,
          "bw_bound_ms": float("nan"), "limit_ms": float("inf")}]
for key in ("e2e_ms", "compute_ms", "v1_total_ms", "v1_conv_ms", "sgemm_best_ms", "dense_ms"):
    sweep[0][key + "_min"] = sweep[0][key + "_max"] = sweep[0][key]
grid = [{"workload": "lidar_2000", "threads": 1, "volume": 1, "rss_mib": 5.0},
        {"workload": "lidar_2000", "threads": 1, "volume": 8, "rss_mib": 5.0}]
batch_fits = [dict(f, series="batch")]
found = run.goals(sweep, grid, batch_fits)
print("goals")
print(run.goals_table(found))
print("sweep")
print(run.sweep_table(sweep))
print("limits")
print(run.limits_table(sweep))
print("spread")
print(run.spread_table(sweep))
print("cold")
print(run.cold_table(sweep))
print("checks")
print(run.checks_table([{"workload": "lidar_2000", "threads": 1, "layer": "64->64 k3",
                         "side": "spconv-v1-cpu", "rows": 0, "coords_equal": True,
                         "rel_err": 0.0, "ok": True}]))
print("scaling")
print(run.scaling_tables(scaling, fits))

# Drives bench/run.py's check_outputs on hand-made outputs (see
# output-check.test).
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench"))
import run  # noqa: E402

tmp = sys.argv[1]
coords = np.array([[0, 1, 2, 3], [0, 1, 2, 4], [0, 2, 2, 4]], np.int32)
np.save(os.path.join(tmp, "coords.npy"), coords)
ours = np.array([[1.0, 2.0], [3.0, 4.0], [-1.0, 0.0]], np.float32)
np.save(os.path.join(tmp, "out0.npy"), ours)


class Workload:
    name = "lidar_3"
    coords = os.path.join(tmp, "coords.npy")


class Opts:
    check_tolerance = 1e-4


def write(name, feats, c):
    np.save(os.path.join(tmp, name + "_f.npy"), feats)
    np.save(os.path.join(tmp, name + "_c.npy"), c)


def check(label):
    print("case " + label)
    try:
        for c in run.check_outputs(Opts, Workload, "4->2 k3", 1, tmp):
            print(c["side"], c["coords_equal"], c["ok"])
    except SystemExit as e:
        print("exit: " + str(e).replace(tmp, "TMP"))


write("v1", ours + 1e-6, coords)
write("s2", ours, coords)
check("equal")
write("v1", ours + np.float32(2.0), coords)
os.remove(os.path.join(tmp, "s2_f.npy"))
check("features")
write("v1", ours, coords[[1, 0, 2]])
check("coordinates")

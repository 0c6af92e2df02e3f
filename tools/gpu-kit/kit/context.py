"""What every phase of a kit run shares: the kit, the device side, the
reference side, the checks and the phase's data.

The device side is the CUDA build of each function on a GPU (the object of
the device's chip, else the sm_80 one, whose PTX the driver compiles), or
its GPU-emulator build in a stand-in run; the reference side is always the
CPU build of the same function, run on the same machine.
"""
import json
import os
import time

import numpy as np

from .device import CudaDevice, HostDevice
from .library import CallError, Library


class Checks:
    """Named pass/fail results of a phase."""

    def __init__(self):
        self.passed = []
        self.failed = []  # (name, why)
        self.notes = []
        # A file each result is appended to as it comes (JSON lines), so
        # that a phase that crashes keeps what it found before.
        self.progress = None

    def _record(self, entry):
        if self.progress:
            with open(self.progress, "a") as f:
                f.write(json.dumps(entry) + "\n")

    @staticmethod
    def load_progress(path):
        """The passed and failed checks of a progress file ({} if none)."""
        if not os.path.exists(path):
            return {}
        found = {"passed": [], "failed": []}
        with open(path) as f:
            for line in f:
                entry = json.loads(line)
                if "why" in entry:
                    found["failed"].append([entry["name"], entry["why"]])
                else:
                    found["passed"].append(entry["name"])
        return found

    def ok(self, name):
        self.passed.append(name)
        self._record({"name": name})

    def fail(self, name, why):
        self.failed.append((name, str(why).strip()[:2000]))
        self._record({"name": name, "why": self.failed[-1][1]})
        print("FAIL %s: %s" % (name, str(why).strip().splitlines()[0] if str(why).strip()
                               else ""), flush=True)

    def run(self, name, function, *args):
        """Runs a check: a CallError, a failed comparison (AssertionError) or
        any other exception fails it by name. Its name is printed first, so
        that a crash's last output names the check."""
        print("-- %s" % name, flush=True)
        try:
            function(*args)
        except Exception as e:  # noqa: BLE001 - every failure is reported by name
            self.fail(name, "%s: %s" % (type(e).__name__, e))
            return False
        self.ok(name)
        return True


class Context:
    def __init__(self, kit_root, mode, work, out=None, quick=False, plant=None, sites=None):
        self.root = kit_root
        self.out = out or work
        self.mode = mode  # "cuda" or "stand-in"
        self.work = work
        self.quick = quick
        self.plant = plant
        with open(os.path.join(kit_root, "kit.json")) as f:
            self.kit = json.load(f)
        self.functions = self.kit["functions"]
        lib = os.path.join(kit_root, "lib")
        self.host = HostDevice(os.path.join(lib, "libspconv_runtime.so.1"))
        if mode == "cuda":
            self.device = CudaDevice(os.path.join(lib, "libspconv_runtime_cuda.so.1"))
            self.device_props = self.device.properties()
        else:
            self.device = self.host
            self.device_props = None
        # Scan sizes: the yardstick's 100k sites on a GPU; a few thousand
        # where the emulator plays the device.
        self.sites = sites or (100000 if mode == "cuda" else 2000)
        self.checks = Checks()
        self.data = {}
        self.deadline = None  # perf_counter() time the phase must end by
        self._loaded = {}

    # -- functions ----------------------------------------------------------
    def device_target(self, name):
        """The device build of function `name` to load here."""
        built = self.functions[name]["targets"]
        if self.mode != "cuda":
            return "emu"
        chip = self.device_props["chip"]
        if "cuda-" + chip in built:
            return "cuda-" + chip
        # PTX of the lowest chip: the driver compiles it for newer ones
        # (by number: sm_100 is newer than sm_80).
        cudas = [t for t in built if t.startswith("cuda-sm_")]
        if not cudas:
            raise CallError("%s has no CUDA build in this kit" % name)
        return min(cudas, key=lambda t: int(t[len("cuda-sm_"):].rstrip("a")))

    def library(self, name, target):
        key = (name, target)
        if key not in self._loaded:
            info = self.functions.get(name)
            if info is None:
                raise CallError("%s is not in this kit" % name)
            if target not in info["targets"]:
                why = info["errors"].get(target, "not built for this target")
                raise CallError("%s (%s) did not compile when the kit was built: %s"
                                % (name, target, why))
            side = self.host if target in ("cpu", "emu", "emu-race") else self.device
            self._loaded[key] = Library(os.path.join(self.root, info["dir"], target + ".so"),
                                        side)
        return self._loaded[key]

    def on_device(self, name, *arrays, target=None):
        """Calls the device build of `name`; a planted fault (--plant NAME)
        changes one value of its last floating-point result, as a wrong
        kernel would."""
        target = target or self.device_target(name)
        results = self.library(name, target)(*arrays)
        if self.plant == name:
            for array in reversed(results):
                if array.dtype.kind == "f" and array.size:
                    array.flat[0] += 1.0
                    break
                if array.dtype == np.uint16 and array.size:  # bf16 bits
                    array.flat[0] ^= 0x4000
                    break
        return results

    def on_cpu(self, name, *arrays):
        return self.library(name, "cpu")(*arrays)

    def write_output(self, name, text):
        """A file that comes back with the report."""
        with open(os.path.join(self.out, name), "w") as f:
            f.write(text)

    def budget_left(self):
        return max(1.0, self.deadline - time.perf_counter()) if self.deadline else 600.0

    def previous(self, phase):
        """The data of an earlier phase of this run, if it ran."""
        path = os.path.join(self.work, "phase-%s.json" % phase)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f).get("data")

    def names(self, group):
        return sorted(n for n, info in self.functions.items() if info["group"] == group)

    def timer(self):
        return self.device.timer()


def find_tool(name):
    """A CUDA tool (ncu, compute-sanitizer) on PATH or where the toolkit and
    Nsight Compute install it; None if absent."""
    import glob
    import shutil
    found = shutil.which(name)
    if found:
        return found
    for pattern in ("/usr/local/cuda/bin/%s", "/usr/local/cuda-*/bin/%s",
                    "/opt/nvidia/nsight-compute/*/%s", "/usr/local/cuda/compute-sanitizer/%s"):
        matches = sorted(glob.glob(pattern % name))
        if matches:
            return matches[-1]
    return None


def compare(actual, expected, rtol, atol, what):
    """Fails with the first element outside atol + rtol * |expected|
    (spconv-npy-compare's rule), naming `what`."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        raise AssertionError("%s: shape %s, expected %s" % (what, actual.shape, expected.shape))
    if actual.dtype.kind in "iub" and expected.dtype.kind in "iub":
        bad = np.flatnonzero(actual.ravel() != expected.ravel())
    else:
        a = actual.astype(np.float64).ravel()
        e = expected.astype(np.float64).ravel()
        close = np.abs(a - e) <= atol + rtol * np.abs(e)
        close |= np.isnan(a) & np.isnan(e)
        bad = np.flatnonzero(~close)
    if bad.size:
        i = bad[0]
        raise AssertionError("%s: %d of %d elements differ, first at flat index %d: %r, "
                             "expected %r" % (what, bad.size, actual.size, i,
                                              actual.ravel()[i], expected.ravel()[i]))


def bf16_bits(array):
    """f32 -> bf16 bits (nearest, ties to even)."""
    bits = np.ascontiguousarray(array, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def now():
    return time.perf_counter()

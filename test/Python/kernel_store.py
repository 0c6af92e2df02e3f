"""The Python front end's libraries in the kernel store that spconv-run
shares (kernel-store.test; docs/Compiler.md, "The kernel store"): hits,
a damaged entry, eviction across producers, concurrent compiles, the
environment's errors. The store is $SPCONV_MLIR_CACHE_DIR, where the test
has put one of spconv-run's entries first.

usage: kernel_store.py
"""
import os
import subprocess
import sys

import numpy as np

import spconv_mlir
import spconv_mlir.nn as spconv
from spconv_mlir.errors import ToolchainError
from spconv_mlir.store import KernelStore
from spconv_mlir.toolchain import build_library

ROOT = os.environ["SPCONV_MLIR_CACHE_DIR"]
store = KernelStore(spconv_mlir.find_toolchain().libdir)
assert store.root == ROOT, (store.root, ROOT)


def kinds():
    return sorted(key.split("-")[0] for key, _, _ in store.entries())


def model(channels):
    spconv.manual_seed(0)
    return spconv.SparseSequential(spconv.SubMConv3d(3, channels, 3))


indices = np.array([[0, 0, i % 4, i // 4] for i in range(6)], np.int32)
x = spconv_mlir.SparseConvTensor(np.arange(18, dtype=np.float32).reshape(6, 3),
                                 indices, [4, 4, 4], 1)
print("before: %s" % kinds())

net = spconv_mlir.compile(model(2), grid=[4, 4, 4])
want = net(x).features
print("after compile(): %s" % kinds())
again = spconv_mlir.compile(model(2), grid=[4, 4, 4])
print("the same network again, the same entry: %s"
      % (again.library_path == net.library_path))

# Cut short (a full disk): the entry no longer matches its MANIFEST, so it
# is a miss, compiled again into the same key. (build_library loads what it
# returns, and a library this process has loaded stays loaded under its
# path: this one is built by another process.)
toolchain = spconv_mlir.find_toolchain()
text = net.mlir + "\n// another module\n"
BUILD = ("import sys; from spconv_mlir import find_toolchain; "
         "from spconv_mlir.toolchain import build_library; "
         "print(build_library(sys.stdin.read(), find_toolchain())[0])")


def build_elsewhere(mlir):
    return subprocess.run([sys.executable, "-c", BUILD], input=mlir, capture_output=True,
                          text=True, check=True).stdout.strip()


path = build_elsewhere(text)
size = os.path.getsize(path)
os.truncate(path, 1000)
again_path, _ = build_library(text, toolchain)
loads = subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])",
                        again_path]).returncode == 0
print("damaged library: compiled again into the same key: %s, whole and loads: %s"
      % (again_path == path, os.path.getsize(again_path) == size and loads))

# Another process evicts an entry between this one's lookup and its load:
# a miss after all, compiled again, and what comes back is loaded.
raced = net.mlir + "\n// a raced module\n"
build_elsewhere(raced)
lookup = KernelStore.lookup


def evicted_after_lookup(self, key):
    entry = lookup(self, key)
    KernelStore.lookup = lookup
    if entry:
        self.remove(key)
    return entry


KernelStore.lookup = evicted_after_lookup
raced_path, _ = build_library(raced, toolchain)
print("an entry evicted between lookup and load: compiled again: %s, loaded: %s"
      % (os.path.exists(raced_path), raced_path in open("/proc/self/maps").read()))

# Publishing evicts the least recently used entries of every producer down
# to the limit, never the new one; a library this process has loaded keeps
# working after its entry is gone.
os.environ["SPCONV_MLIR_CACHE_SIZE"] = "1"
other = spconv_mlir.compile(model(5), grid=[4, 4, 4])
print("after a compile() with a 1-byte limit: %s entry, the new one: %s"
      % (kinds(), os.path.dirname(other.library_path) == store.lookup(store.entries()[0][0])))
print("an evicted network still runs: %s" % np.array_equal(net(x).features, want))
del os.environ["SPCONV_MLIR_CACHE_SIZE"]

# Processes compiling one network at once: all succeed, one entry.
script = ("import spconv_mlir, spconv_mlir.nn as spconv; spconv.manual_seed(1); "
          "print(spconv_mlir.compile(spconv.SparseSequential(spconv.SubMConv3d(3, 7, 3)), "
          "grid=[4, 4, 4]).library_path)")
runs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        for _ in range(3)]
paths = set()
for run in runs:
    out, _ = run.communicate()
    if run.returncode != 0:
        sys.exit("a concurrent compile failed")
    paths.add(out.strip())
print("3 processes at once: %d library, %d entries, staging empty: %s"
      % (len(paths), len(store.entries()), not os.listdir(os.path.join(ROOT, "staging"))))

for value in ("2X", ""):
    os.environ["SPCONV_MLIR_CACHE_SIZE"] = value
    try:
        spconv_mlir.compile(model(3), grid=[4, 4, 4])
        print("SPCONV_MLIR_CACHE_SIZE=%r: no error" % value)
    except ToolchainError as e:
        print("SPCONV_MLIR_CACHE_SIZE=%r: %s" % (value, e))
del os.environ["SPCONV_MLIR_CACHE_SIZE"]

os.environ["SPCONV_MLIR_CACHE_DIR"] = "off"
before = len(store.entries())
off = spconv_mlir.compile(model(4), grid=[4, 4, 4])
print("store off: compiled outside it: %s, entries unchanged: %s"
      % (not off.library_path.startswith(ROOT), len(store.entries()) == before))

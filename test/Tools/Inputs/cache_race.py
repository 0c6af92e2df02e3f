"""Starts several spconv-run processes at once on one empty cache directory
and checks that each succeeds with the same outputs, and that the cache ends
up with exactly one whole module entry and the whole entries of the kernels
it lists (spconv-run-cache.test, spconv-run-kernels.test).

usage: cache_race.py SPCONV_RUN CACHE_DIR OUT_DIR PROCESSES -- ARGS...
"""
import glob
import os
import subprocess
import sys

import numpy as np

spconv_run, cache, out, processes = sys.argv[1:5]
args = sys.argv[sys.argv.index("--") + 1:]
runs = [
    subprocess.Popen([spconv_run] + args + ["--cache-dir", cache,
                                            "--output-dir", "%s/%d" % (out, i)],
                     stderr=subprocess.PIPE, text=True)
    for i in range(int(processes))
]
for i, run in enumerate(runs):
    _, stderr = run.communicate()
    if run.returncode != 0 or "warning" in stderr:
        sys.exit("process %d: exit %d\n%s" % (i, run.returncode, stderr))
first = sorted(glob.glob("%s/0/*.npy" % out))
for i in range(1, int(processes)):
    for path in first:
        other = path.replace("/0/", "/%d/" % i)
        if not np.array_equal(np.load(path), np.load(other)):
            sys.exit("process %d: %s differs" % (i, os.path.basename(path)))
entries = os.listdir(os.path.join(cache, "kernels-v1"))
modules = [e for e in entries if e.startswith("jit-")]
if len(modules) != 1:
    sys.exit("the store holds %s, not one module entry" % entries)
module = os.path.join(cache, "kernels-v1", modules[0])
if sorted(os.listdir(module)) != ["MANIFEST", "kernels", "labels", "module.o"]:
    sys.exit("the module entry holds %s" % sorted(os.listdir(module)))
with open(os.path.join(module, "kernels")) as listed:
    kernels = listed.read().split()
if sorted(kernels) != sorted(e for e in entries if e != modules[0]):
    sys.exit("the store holds %s, the module lists the kernels %s"
             % (entries, kernels))
for kernel in kernels:
    files = sorted(os.listdir(os.path.join(cache, "kernels-v1", kernel)))
    if files != ["MANIFEST", "kernel.o"]:
        sys.exit("kernel entry %s holds %s" % (kernel, files))
if os.listdir(os.path.join(cache, "staging")):
    sys.exit("the losers' staging directories are left: %s"
             % os.listdir(os.path.join(cache, "staging")))
print("%s processes, one module entry and its %d kernels, equal outputs"
      % (processes, len(kernels)))

"""Starts several spconv-run processes at once on one empty cache directory
and checks that each succeeds with the same outputs, and that the cache ends
up with exactly one whole entry (spconv-run-cache.test).

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
if len(entries) != 1 or sorted(os.listdir(os.path.join(cache, "kernels-v1", entries[0]))) != \
        ["MANIFEST", "labels", "module.o"]:
    sys.exit("the store holds %s, not one whole entry" % entries)
if os.listdir(os.path.join(cache, "staging")):
    sys.exit("the losers' staging directories are left: %s"
             % os.listdir(os.path.join(cache, "staging")))
print("%s processes, one entry, equal outputs" % processes)

"""Checks how the GPU kit's `probes` phase reads the wgmma-layouts probe:
a family passes when exactly one of its readings matched, and fails,
naming every reading's result, when none or several did; a listed
candidate whose own process printed no result (a fault, a crash) is not
run, and counts as no match."""
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "test", "Integration", "CPU"))
sys.path.insert(0, os.path.join(sys.argv[1], "tools", "gpu-kit"))
sys.path.insert(0, os.path.join(sys.argv[1], "python"))
from kit.context import Checks  # noqa: E402
from kit.probes import candidates, collect, judge, parse  # noqa: E402

OUTPUT = """wgmma-layouts on NVIDIA H100 80GB HBM3
layout f16 K-major none [lbo-k]: match
layout f16 K-major none [lbo-mn]: mismatch (3584 of 4096 elements differ)
  D(0, 1) = 3, A B has 5
layout tf32 K-major none [lbo-k]: mismatch (4000 of 4096 elements differ)
layout tf32 K-major none [lbo-mn]: error (an illegal instruction was encountered)
layout f16 K-major swizzle-128 [sbo-mn]: match
layout f16 B-MN-major none [lbo-n]: match
layout f16 B-MN-major none [lbo-k]: match
3 of 5 layouts matched
"""


class Stub:
    def __init__(self):
        self.checks = Checks()


families = parse(OUTPUT)
want = {
    "f16 K-major none": {"lbo-k": "match",
                         "lbo-mn": "mismatch (3584 of 4096 elements differ)"},
    "tf32 K-major none": {"lbo-k": "mismatch (4000 of 4096 elements differ)",
                          "lbo-mn": "error (an illegal instruction was encountered)"},
    "f16 K-major swizzle-128": {"sbo-mn": "match"},
    "f16 B-MN-major none": {"lbo-n": "match", "lbo-k": "match"},
}
if families != want:
    sys.exit("parse:\n%s\nexpected:\n%s" % (families, want))
ctx = Stub()
judge(ctx, families)
passed = ["wgmma layout f16 K-major none (lbo-k)", "wgmma layout f16 K-major swizzle-128 (sbo-mn)"]
if sorted(ctx.checks.passed) != sorted(passed):
    sys.exit("passed: %s, expected %s" % (ctx.checks.passed, passed))
failed = dict(ctx.checks.failed)
if sorted(failed) != ["wgmma layout f16 B-MN-major none", "wgmma layout tf32 K-major none"]:
    sys.exit("failed: %s" % sorted(failed))
if not failed["wgmma layout tf32 K-major none"].startswith("0 readings matched: lbo-k: mismatch"):
    sys.exit("tf32 finding: " + failed["wgmma layout tf32 K-major none"])
if not failed["wgmma layout f16 B-MN-major none"].startswith("2 readings matched"):
    sys.exit("B-MN-major finding: " + failed["wgmma layout f16 B-MN-major none"])

# Each candidate in a process of its own: what `--list` names is what is
# judged, whatever the runs printed.
LISTING = """candidate 0 f16 K-major none [lbo-k]
candidate 1 f16 K-major none [lbo-mn]
candidate 2 tf32 K-major swizzle-128 [sbo-mn]
"""
listed = candidates(LISTING)
if listed != [(0, "f16 K-major none", "lbo-k"), (1, "f16 K-major none", "lbo-mn"),
              (2, "tf32 K-major swizzle-128", "sbo-mn")]:
    sys.exit("candidates: %s" % listed)
outputs = {
    0: (0, "wgmma-layouts on NVIDIA H200\nlayout f16 K-major none [lbo-k]: match\n1 of 1 layouts matched\n"),
    1: (0, "wgmma-layouts on NVIDIA H200\nlayout f16 K-major none [lbo-mn]: error (an illegal memory access was encountered)\n"),
    2: (-11, "wgmma-layouts on NVIDIA H200\n"),
}
families = collect(listed, outputs)
want = {
    "f16 K-major none": {"lbo-k": "match",
                         "lbo-mn": "error (an illegal memory access was encountered)"},
    "tf32 K-major swizzle-128": {"sbo-mn": "not run (exit -11: wgmma-layouts on NVIDIA H200)"},
}
if families != want:
    sys.exit("collect:\n%s\nexpected:\n%s" % (families, want))
ctx = Stub()
judge(ctx, families)
if ctx.checks.passed != ["wgmma layout f16 K-major none (lbo-k)"]:
    sys.exit("passed: %s" % ctx.checks.passed)
if [name for name, _ in ctx.checks.failed] != ["wgmma layout tf32 K-major swizzle-128"]:
    sys.exit("failed: %s" % ctx.checks.failed)
print("ok")

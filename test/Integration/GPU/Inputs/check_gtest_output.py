"""Checks the GPU kit's extraction of failed gtest output."""
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "test", "Integration", "CPU"))
sys.path.insert(0, os.path.join(sys.argv[1], "tools", "gpu-kit"))
sys.path.insert(0, os.path.join(sys.argv[1], "python"))
from kit.correctness import failed_test_output  # noqa: E402

STDOUT = """[==========] Running 3 tests from 1 test suite.
[ RUN      ] CudaDevice.Passes
[       OK ] CudaDevice.Passes (1 ms)
[ RUN      ] CudaDevice.Fails
CudaTest.cpp:135: Failure
Expected equality of these values:
  back[11]
    Which is: 11
[  FAILED  ] CudaDevice.Fails (150 ms)
[ RUN      ] CudaDevice.Skips
SKIP: no CUDA device
[  SKIPPED ] CudaDevice.Skips (0 ms)
[  FAILED  ] 1 test, listed below:
[  FAILED  ] CudaDevice.Fails
"""

got = failed_test_output(STDOUT)
want = ["[ RUN      ] CudaDevice.Fails", "CudaTest.cpp:135: Failure",
        "Expected equality of these values:", "  back[11]", "    Which is: 11",
        "[  FAILED  ] CudaDevice.Fails (150 ms)"]
if got != want:
    sys.exit("failed_test_output:\n%s\nexpected:\n%s" % ("\n".join(got), "\n".join(want)))
print("ok")

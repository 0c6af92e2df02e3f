# -*- Python -*-

import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "SPCONV"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.spconv_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%spconv_src_root", config.spconv_src_root))
config.substitutions.append(("%spconv_obj_root", config.spconv_obj_root))

# Upstream MLIR's FileCheck settings: variables are scoped to CHECK-LABELs
# and every declared prefix must be used.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
# The kernel store stays out of the tests (and the user's home): tests that
# compile through it name their own (Tools/spconv-run-cache.test, the Python
# tests).
config.environment["SPCONV_MLIR_CACHE_DIR"] = "off"
llvm_config.use_default_substitutions()

config.substitutions.append(("%spconv_tools_dir", config.spconv_tools_dir))

# A build with -DSPCONV_ENABLE_SANITIZERS=ON (scripts/test-sanitizers.sh): the
# tools run under ASan + UBSan, several times slower. A test too slow for it
# says `UNSUPPORTED: sanitizers` and why.
if getattr(config, "spconv_sanitizers", False):
    config.available_features.add("sanitizers")


def find_python_with_numpy():
    """The execution tests generate inputs with numpy (python3-numpy)."""
    import shutil
    import subprocess

    for candidate in ["/usr/bin/python3", sys.executable, shutil.which("python3")]:
        if candidate and subprocess.run(
            [candidate, "-c", "import numpy"], capture_output=True
        ).returncode == 0:
            return candidate
    return None


config.spconv_python = find_python_with_numpy()
if config.spconv_python:
    config.substitutions.append(("%python", config.spconv_python))

# Tests with a PyTorch oracle (autograd) or of torch tensors and layers need
# torch (Debian's python3-torch; scripts/test-python.sh --install).
import subprocess
if config.spconv_python and subprocess.run(
        [config.spconv_python, "-c", "import torch"], capture_output=True).returncode == 0:
    config.available_features.add("torch")

# spconv_mlir.torch (custom ops, torch.compile) needs PyTorch 2.4 or later:
# scripts/test-python.sh --install puts it into <build>/venv-torch.
torch2 = os.path.join(config.spconv_obj_root, "venv-torch", "bin", "python")
if os.path.exists(torch2) and subprocess.run(
        [torch2, "-c", "import torch; torch.library.custom_op"],
        capture_output=True).returncode == 0:
    config.available_features.add("torch2")
    config.substitutions.append(("%torch2_python", torch2))

# The GPU kit's driver must run on numpy 2 too (what the GPU machines have):
# scripts/test.sh puts numpy 2 into <build>/venv-numpy2 when PyPI answers.
numpy2 = os.path.join(config.spconv_obj_root, "venv-numpy2", "bin", "python")
if os.path.exists(numpy2):
    config.available_features.add("numpy2")
    config.substitutions.append(("%numpy2_python", numpy2))

tool_dirs = [config.spconv_tools_dir, config.llvm_tools_dir]
tools = ["spconv-opt", "spconv-compile", "spconv-capi-test"]
if config.spconv_enable_runtime:
    tools += ["spconv-run", "spconv-store", "spconv-ref", "spconv-npy-compare",
              "spconv-aot-example"]
    # Built when the CUDA toolkit was found (with the runtime's CUDA library).
    if os.path.exists(os.path.join(config.spconv_tools_dir, "spconv-aot-example-cuda")):
        tools += ["spconv-aot-example-cuda"]
        config.available_features.add("cuda-toolkit")
# Under the sanitizers a tool the sanitizer build did not make is an error,
# not a silent fallback to a path that does not exist.
if "sanitizers" in config.available_features:
    tools = [ToolSubst(t, unresolved="fatal") for t in tools]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Tests that compile for named x86 CPUs (spconv-compile --mcpu=haswell).
import platform
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86-host")

# Debian's own mlir-opt, which loads tools/spconv-plugin as a dialect and pass
# plugin (test/Tools/mlir-opt-plugin.mlir).
# Instrumented libraries loaded into an uninstrumented process (Debian's
# mlir-opt, Python) need the sanitizer runtimes first in its library list:
# %sanitizer_preload is the LD_PRELOAD for that (empty without sanitizers).
config.spconv_sanitizer_preload = ""
if "sanitizers" in config.available_features:
    def runtime_library(name):
        found = subprocess.run(["cc", "-print-file-name=" + name],
                               capture_output=True, text=True).stdout.strip()
        return found if os.path.isabs(found) else None
    libs = [runtime_library(n) for n in ("libasan.so", "libubsan.so")]
    if all(libs):
        config.spconv_sanitizer_preload = ":".join(libs)
config.substitutions.append(
    ("%mlir_opt",
     ("env LD_PRELOAD=%s " % config.spconv_sanitizer_preload
      if config.spconv_sanitizer_preload else "")
     + os.path.join(config.llvm_tools_dir, "mlir-opt")))
config.substitutions.append(
    ("%spconv_plugin", os.path.join(config.spconv_obj_root, "lib", "SpConvPlugin.so")))
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)


def find_ptxas():
    """The CUDA toolkit's assembler, which checks the generated PTX."""
    import shutil

    for candidate in [shutil.which("ptxas"), "/usr/local/cuda/bin/ptxas"]:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def cuda_device_visible():
    """Whether a GPU can run the CUDA target (nvidia-smi lists one)."""
    import subprocess

    try:
        result = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                                text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0 and "GPU" in result.stdout


config.spconv_ptxas = find_ptxas()
if config.spconv_ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.spconv_ptxas))

# nvdisasm reads the kernels' machine code for scripts/sass-report.py: the
# pinned PyPI release that scripts/install-sass-tools.sh puts under the build
# (scripts/test.sh runs it), else one on PATH or in the toolkit.
def find_nvdisasm():
    import glob
    import shutil

    pinned = glob.glob(os.path.join(config.spconv_obj_root, "venv-sass", "lib",
                                    "python3*", "site-packages", "nvidia", "cu13",
                                    "bin", "nvdisasm"))
    for candidate in pinned + [shutil.which("nvdisasm"), "/usr/local/cuda/bin/nvdisasm"]:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


config.spconv_nvdisasm = find_nvdisasm()
if config.spconv_ptxas and config.spconv_nvdisasm:
    config.available_features.add("nvdisasm")
    config.substitutions.append(("%nvdisasm", config.spconv_nvdisasm))

# gpu-module-to-binary links libdevice (kernels that call math functions: the
# training loss's exp and log) from the CUDA toolkit that CUDA_ROOT, CUDA_HOME
# or CUDA_PATH names; with none it links nothing and ptxas stops at
# "Unresolved extern function '__nv_expf'". Keep the user's, else name the
# toolkit whose ptxas the tests use.
_cuda_vars = ["CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"]
llvm_config.with_system_environment(_cuda_vars)
if config.spconv_ptxas and not any(v in config.environment for v in _cuda_vars):
    config.environment["CUDA_ROOT"] = os.path.dirname(
        os.path.dirname(os.path.realpath(config.spconv_ptxas)))
if cuda_device_visible():
    config.available_features.add("cuda-device")

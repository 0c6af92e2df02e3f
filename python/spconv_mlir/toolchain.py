"""Finds spconv-compile and the runtime, and turns MLIR into a loadable
library: `spconv-compile` makes an object and its C header, the system C
compiler links them with the runtime into a shared library. Libraries are
kept in the kernel store (store.py) under a hash of the MLIR, the options
and the compiler's identity.

Where the tools are, first found wins:
  1. `compile(..., prefix=DIR)` or the environment's `SPCONV_MLIR_PREFIX`:
     an install prefix (`cmake --install`) or a build directory;
  2. the prefix this package was installed into by `cmake --install`;
  3. `spconv-compile` on `PATH` (its prefix is the folder above `bin/`);
  4. `build/` of the checkout this package sits in.
"""
import ctypes.util
import hashlib
import os
import re
import shutil
import subprocess
import tempfile

from .errors import ToolchainError
from .store import KernelStore

RUNTIME = "libspconv_runtime.so"
RUNTIME_CUDA = "libspconv_runtime_cuda.so"
LIBOMP_CANDIDATES = ["/usr/lib/llvm-22/lib/libomp.so", "/usr/lib/llvm-22/lib/libomp.so.5"]
RUNNER_UTILS_CANDIDATES = ["/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so"]


class Toolchain:
    def __init__(self, prefix, compiler, libdir):
        self.prefix, self.compiler, self.libdir = prefix, compiler, libdir

    def identity(self):
        """What the cache key takes from the tools: a new build of the
        compiler or the runtime gives new keys."""
        parts = []
        for path in (self.compiler, os.path.join(self.libdir, RUNTIME)):
            st = os.stat(path)
            parts.append("%s:%d:%d" % (os.path.realpath(path), st.st_size, st.st_mtime_ns))
        return ";".join(parts)

    def __repr__(self):
        return "Toolchain(compiler=%r, libdir=%r)" % (self.compiler, self.libdir)


def _libdir(prefix):
    for sub in ("lib", "lib64", "runtime/lib", "lib/x86_64-linux-gnu",
                "lib/aarch64-linux-gnu"):
        if os.path.exists(os.path.join(prefix, sub, RUNTIME)):
            return os.path.join(prefix, sub)
    return None


def _from_prefix(prefix):
    # Absolute: the library directory becomes the compiled libraries' rpath,
    # and a library in the cache serves any working directory.
    prefix = os.path.abspath(prefix)
    compiler = os.path.join(prefix, "bin", "spconv-compile")
    libdir = _libdir(prefix)
    if os.access(compiler, os.X_OK) and libdir:
        return Toolchain(prefix, compiler, libdir)
    return None


def _candidates(prefix):
    if prefix:
        yield "prefix=", prefix
        return
    if os.environ.get("SPCONV_MLIR_PREFIX"):
        yield "SPCONV_MLIR_PREFIX", os.environ["SPCONV_MLIR_PREFIX"]
        return
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from . import _install  # written by cmake --install

        yield "the CMake install", os.path.normpath(os.path.join(here, _install.PREFIX))
    except ImportError:
        pass
    found = shutil.which("spconv-compile")
    if found:
        yield "PATH", os.path.dirname(os.path.dirname(os.path.realpath(found)))
    yield "the checkout's build/", os.path.normpath(os.path.join(here, "..", "..", "build"))


def find_toolchain(prefix=None):
    tried = []
    for source, candidate in _candidates(prefix):
        toolchain = _from_prefix(candidate)
        if toolchain:
            return toolchain
        tried.append("%s (%s)" % (candidate, source))
    raise ToolchainError(
        "spconv-compile and %s were not found; looked in: %s. Build spconv-mlir "
        "(scripts/build.sh) or install it (cmake --install), then pass "
        "prefix=DIR to compile() or set SPCONV_MLIR_PREFIX to the install prefix "
        "or build directory" % (RUNTIME, "; ".join(tried)))


def _find_shared(name, candidates, env):
    if os.environ.get(env):
        return os.environ[env]
    for path in candidates:
        if os.path.exists(path):
            return path
    found = ctypes.util.find_library(name)
    if found:
        return found
    raise ToolchainError("%s not found (tried %s); install it (scripts/install-deps.sh "
                         "does) or set %s to its path" % (name, ", ".join(candidates), env))


def find_libomp():
    """The LLVM OpenMP runtime compiled networks link ($SPCONV_MLIR_LIBOMP
    first)."""
    return _find_shared("omp", LIBOMP_CANDIDATES, "SPCONV_MLIR_LIBOMP")


def _run(cmd, what):
    try:
        result = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise ToolchainError("%s: cannot run %s: %s" % (what, cmd[0], e)) from None
    if result.returncode != 0:
        raise ToolchainError("%s failed (exit %d): %s\n%s" % (
            what, result.returncode, " ".join(cmd), (result.stderr or result.stdout).strip()))
    return result


def _link_libraries(header_text, toolchain, target):
    """The libraries the header's "Link with" line names, as linker
    arguments."""
    match = re.search(r"Link with:([^\n]*)\.", header_text)
    names = match.group(1).split() if match else []
    args = ["-L" + toolchain.libdir, "-Wl,-rpath," + toolchain.libdir]
    for name in names:
        if name == "spconv_runtime":
            args.append("-lspconv_runtime")
        elif name == "spconv_runtime_cuda":
            if not os.path.exists(os.path.join(toolchain.libdir, RUNTIME_CUDA)):
                raise ToolchainError("target=%r needs %s, which this build of spconv-mlir "
                                     "lacks (configure it with the CUDA toolkit)"
                                     % (target, RUNTIME_CUDA))
            args.append("-lspconv_runtime_cuda")
        elif name == "libomp":
            libomp = find_libomp()
            args += [libomp, "-Wl,-rpath," + os.path.dirname(libomp)]
        elif name == "mlir_c_runner_utils":
            utils = _find_shared("mlir_c_runner_utils", RUNNER_UTILS_CANDIDATES,
                                 "SPCONV_MLIR_RUNNER_UTILS")
            args += [utils, "-Wl,-rpath," + os.path.dirname(utils)]
    return args


def _compile_into(work, mlir_text, toolchain, target, options, entries, library):
    """Compiles `mlir_text` into `work`/`library` and `work`/net.h."""
    source, obj = os.path.join(work, "net.mlir"), os.path.join(work, "net.o")
    with open(source, "w") as f:
        f.write(mlir_text)
    _run([toolchain.compiler, source, "-o", obj, "--header", os.path.join(work, "net.h"),
          "--target", target] + ["--entry=" + e for e in entries] + options, "spconv-compile")
    with open(os.path.join(work, "net.h")) as f:
        header = f.read()
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise ToolchainError("no C compiler (cc) to link the compiled network; "
                             "install build-essential or set CC")
    _run([cc, "-shared", "-o", os.path.join(work, library), obj]
         + _link_libraries(header, toolchain, target) + ["-lm"], "linking the network")
    # The entry keeps what is loaded: the library and its header.
    os.remove(source)
    os.remove(obj)


def build_library(mlir_text, toolchain, target="cpu", options=(), cache=True,
                  entries=("forward",)):
    """The path of a shared library of `mlir_text` compiled for `target`,
    exporting the public functions `entries`, and of its C header: from the
    kernel store when there (unless `cache` is false or the store is off),
    else compiled and published there."""
    options = list(options)
    entries = list(entries)
    library = "libnet.so"
    store = KernelStore(toolchain.libdir) if cache else None
    if not (store and store.enabled):
        work = tempfile.mkdtemp(prefix="spconv-mlir-")
        _compile_into(work, mlir_text, toolchain, target, options, entries, library)
        return os.path.join(work, library), os.path.join(work, "net.h")
    # "lib-": the Python front end's entries, among spconv-run's ("jit-").
    key = "lib-" + hashlib.sha256("\0".join(
        [mlir_text, target] + entries + options + [toolchain.identity()]).encode()
    ).hexdigest()[:32]
    # A damaged entry (files not as its MANIFEST lists them) is a miss.
    entry = store.lookup(key)
    if not entry:
        size_limit = store.size_limit()  # a malformed one fails before compiling
        work = store.begin()
        try:
            _compile_into(work, mlir_text, toolchain, target, options, entries, library)
            entry = store.publish(key, work, size_limit)
        except BaseException:
            store.abandon(work)
            raise
    return os.path.join(entry, library), os.path.join(entry, "net.h")

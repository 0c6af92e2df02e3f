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
A prefix with the runtime but without spconv-compile (a deployment box)
serves what the kernel store already holds: the store's keys take the tools'
identity from `spconv-toolchain-id` beside the runtime, not from the
compiler, so a store filled on a machine with the same build is found there.
"""
import ctypes
import ctypes.util
import functools
import hashlib
import os
import platform
import re
import shutil
import subprocess
import tempfile

from .errors import ToolchainError
from .store import KernelStore

# By soname: the runtime ABI this package speaks (SPCONV_RT_ABI_VERSION),
# and what a prefix holding only the libraries' real files has.
RUNTIME = "libspconv_runtime.so.1"
RUNTIME_CUDA = "libspconv_runtime_cuda.so.1"
# Written by the build beside the runtime: a hash of the compiler, the
# runtime libraries and the LLVM version (cmake/WriteToolchainId.cmake).
TOOLCHAIN_ID = "spconv-toolchain-id"
LIBOMP_CANDIDATES = ["/usr/lib/llvm-22/lib/libomp.so", "/usr/lib/llvm-22/lib/libomp.so.5"]
RUNNER_UTILS_CANDIDATES = ["/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so"]


class Toolchain:
    """The tools under `prefix`: `compiler` (None where only the runtime is
    installed) and the runtime's `libdir`."""

    def __init__(self, prefix, compiler, libdir):
        self.prefix, self.compiler, self.libdir = prefix, compiler, libdir
        self._identity = None

    def identity(self):
        """What the store's keys take from the tools: a new build of the
        compiler or the runtime gives new keys, and the same build gives the
        same keys on every machine, with or without the compiler."""
        if self._identity is None:
            path = os.path.join(self.libdir, TOOLCHAIN_ID)
            try:
                with open(path) as f:
                    text = f.read().strip()
            except OSError as e:
                raise ToolchainError("cannot read %s (%s): the build writes it beside %s; "
                                     "rebuild or reinstall spconv-mlir"
                                     % (path, e.strerror, RUNTIME)) from None
            if not re.fullmatch(r"[0-9a-f]{64}", text):
                raise ToolchainError("%s is not a toolchain identity (64 hex digits); "
                                     "rebuild or reinstall spconv-mlir" % path)
            self._identity = text
        return self._identity

    def require_compiler(self, what):
        """The compiler's path; where only the runtime is installed, a
        ToolchainError that says `what` (the library wanted, and why it must
        be compiled) and what to do."""
        if self.compiler is None:
            raise ToolchainError(
                "%s, and spconv-compile is not installed in %s (only the runtime is): fill "
                "the kernel store on a machine with spconv-compile and this same build, and "
                "ship it (docs/Python.md, \"Deploying without the compiler\")"
                % (what, self.prefix))
        return self.compiler

    def __repr__(self):
        return "Toolchain(compiler=%r, libdir=%r)" % (self.compiler, self.libdir)


_loaded_globals = set()


def _load_global(path):
    if path in _loaded_globals:
        return
    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise ToolchainError("cannot load %s: %s" % (path, e)) from None
    _loaded_globals.add(path)


def _libdir(prefix):
    for sub in ("lib", "lib64", "runtime/lib", "lib/x86_64-linux-gnu",
                "lib/aarch64-linux-gnu"):
        if os.path.exists(os.path.join(prefix, sub, RUNTIME)):
            return os.path.join(prefix, sub)
    return None


def _from_prefix(prefix):
    """The tools under `prefix`; None without a runtime."""
    # Absolute: the library directory becomes the compiled libraries' rpath,
    # and a library in the cache serves any working directory.
    prefix = os.path.abspath(prefix)
    compiler = os.path.join(prefix, "bin", "spconv-compile")
    libdir = _libdir(prefix)
    if not libdir:
        return None
    return Toolchain(prefix, compiler if os.access(compiler, os.X_OK) else None, libdir)


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
    """The first candidate prefix with the compiler and the runtime; else
    the first with the runtime alone (it serves what the store holds)."""
    tried, runtime_only = [], None
    for source, candidate in _candidates(prefix):
        toolchain = _from_prefix(candidate)
        if toolchain and toolchain.compiler:
            return toolchain
        runtime_only = runtime_only or toolchain
        tried.append("%s (%s)" % (candidate, source))
    if runtime_only:
        return runtime_only
    raise ToolchainError(
        "neither spconv-compile nor the runtime (%s) was found; looked in: %s. Build spconv-mlir "
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


def _find_runner_utils():
    """MLIR's C runner utilities, which some networks link
    ($SPCONV_MLIR_RUNNER_UTILS first)."""
    return _find_shared("mlir_c_runner_utils", RUNNER_UTILS_CANDIDATES,
                        "SPCONV_MLIR_RUNNER_UTILS")


def _run(cmd, what):
    try:
        result = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise ToolchainError("%s: cannot run %s: %s" % (what, cmd[0], e)) from None
    if result.returncode != 0:
        raise ToolchainError("%s failed (exit %d): %s\n%s" % (
            what, result.returncode, " ".join(cmd), (result.stderr or result.stdout).strip()))
    return result


def _linked_names(header_text):
    """The libraries the header's "Link with" line names."""
    match = re.search(r"Link with:([^\n]*)\.", header_text)
    return match.group(1).split() if match else []


def _link_libraries(header_text, toolchain, target):
    """The libraries the header's "Link with" line names, as linker
    arguments."""
    args = ["-L" + toolchain.libdir, "-Wl,-rpath," + toolchain.libdir]
    for name in _linked_names(header_text):
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
            utils = _find_runner_utils()
            args += [utils, "-Wl,-rpath," + os.path.dirname(utils)]
    return args


def _load_linked_libraries(header_path, toolchain):
    """Loads what the library of `header_path` links, from this machine's
    places, before the library: one from a store filled on another machine
    names them by soname, and its rpath (that machine's) may not exist
    here."""
    with open(header_path) as f:
        names = _linked_names(f.read())
    paths = {"spconv_runtime": lambda: os.path.join(toolchain.libdir, RUNTIME),
             "spconv_runtime_cuda": lambda: os.path.join(toolchain.libdir, RUNTIME_CUDA),
             "libomp": find_libomp,
             "mlir_c_runner_utils": _find_runner_utils}
    for name in ("libomp", "mlir_c_runner_utils", "spconv_runtime", "spconv_runtime_cuda"):
        if name in names:
            _load_global(paths[name]())


def _compile_into(work, mlir_text, toolchain, target, options, entries, library):
    """Compiles `mlir_text` into `work`/`library` and `work`/net.h."""
    compiler = toolchain.compiler
    source, obj = os.path.join(work, "net.mlir"), os.path.join(work, "net.o")
    with open(source, "w") as f:
        f.write(mlir_text)
    _run([compiler, source, "-o", obj, "--header", os.path.join(work, "net.h"),
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


@functools.lru_cache(maxsize=None)
def _host_cpu():
    """This machine's processor as /proc/cpuinfo names it (vendor, family,
    model, stepping, flags): code compiled with `--mcpu=host` runs on a
    processor with the same description."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read().split("\n\n")[0]
    except OSError:
        return platform.machine() + " " + platform.processor()
    fields = dict((k.strip(), v) for k, v in (line.split(":", 1) for line in
                                              text.splitlines() if ":" in line))
    return "; ".join(fields.get(name, "").strip() for name in (
        "vendor_id", "cpu family", "model", "stepping", "flags", "Features", "CPU part"))


def cpu_options(options):
    """The `--mcpu` spconv-compile gets (the options' own, else
    $SPCONV_MLIR_CPU, else host) as an option list, and what the store's key
    takes from it: the CPU name, or for `host` this machine's description,
    so that a store shared by several machines never hands one another's
    host code."""
    given = [o for o in options if o.startswith("--mcpu=")]
    cpu = given[-1][len("--mcpu="):] if given else os.environ.get("SPCONV_MLIR_CPU") or "host"
    extra = [] if given else ["--mcpu=" + cpu]
    return extra, ("host " + _host_cpu() if cpu == "host" else cpu)


def build_library(mlir_text, toolchain, target="cpu", options=(), cache=True,
                  entries=("forward",), what=None):
    """The path of a shared library of `mlir_text` compiled for `target`,
    exporting the public functions `entries`, and of its C header: from the
    kernel store when there (unless `cache` is false or the store is off),
    else compiled and published there, for the CPU `cpu_options` names.
    The library and what it links are loaded into the process (so that an
    eviction by another process cannot take it away before the caller
    loads it). `what` names the library in errors (default: its
    entries)."""
    options = list(options)
    mcpu, cpu = cpu_options(options)
    options += mcpu
    entries = list(entries)
    what = what or "the library of " + ", ".join(entries)
    library = "libnet.so"
    store = KernelStore(toolchain.libdir) if cache else None
    if not (store and store.enabled):
        toolchain.require_compiler("%s must be compiled (the kernel store is off)" % what)
        work = tempfile.mkdtemp(prefix="spconv-mlir-")
        _compile_into(work, mlir_text, toolchain, target, options, entries, library)
        _load_linked_libraries(os.path.join(work, "net.h"), toolchain)
        return os.path.join(work, library), os.path.join(work, "net.h")
    # "lib-": the Python front end's entries, among spconv-run's ("jit-").
    key = "lib-" + hashlib.sha256("\0".join(
        [mlir_text, target] + entries + options + [cpu, toolchain.identity()]).encode()
    ).hexdigest()[:32]
    # Another process may evict the entry between the lookup and the load:
    # then it is a miss after all. Once loaded, the library stays valid
    # (an evicted entry is renamed away before it is deleted, and a later
    # load by the same path is the loaded library).
    for attempt in range(2):
        # A damaged entry (files not as its MANIFEST lists them) is a miss.
        entry = store.lookup(key)
        if not entry:
            toolchain.require_compiler("%s (key %s) is not in the kernel store at %s"
                                       % (what, key, store.root))
            size_limit = store.size_limit()  # a malformed one fails before compiling
            work = store.begin()
            try:
                _compile_into(work, mlir_text, toolchain, target, options, entries, library)
                entry = store.publish(key, work, size_limit)
            except BaseException:
                store.abandon(work)
                raise
        path, header = os.path.join(entry, library), os.path.join(entry, "net.h")
        try:
            _load_linked_libraries(header, toolchain)
            _load_global(path)
        except (OSError, ToolchainError):
            if attempt == 0 and not os.path.isdir(entry):
                continue
            raise
        return path, header

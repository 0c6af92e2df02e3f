#!/usr/bin/env python3
"""Builds a GPU kit: everything a GPU machine without LLVM needs to prove and
time the CUDA path, compiled here ahead of time (docs/GPU.md, "A GPU day").

usage: build_kit.py --build BUILD --out DIR [--small] [--jobs N]
                    [--chips sm_90,sm_80] [--[no-]emulator] [--max-mib 48]
                    [--baseline-compiler SPCONV_COMPILE]

Compiles every function of functions.py with spconv-compile for each of its
targets (CUDA per chip, the CPU reference and the GPU emulator, host code
for a baseline x86-64), links each object with the kit's runtime into a
shared library, copies the runtime libraries, libomp, spconv-ref, the
runtime's CUDA tests and the driver, builds the device probes (probes/*.cu,
with nvcc, where the chips include the one they question), then checks the kit: at most --max-mib
MiB, and every ELF needs nothing but glibc, libstdc++, libgcc, libm, the
kit's own libraries and the driver's libcuda. A function that does not
compile is recorded in kit.json with the compiler's message (the driver
reports it as a failed check) and fails the build unless --allow-missing.

--baseline-compiler adds the networks and layers compiled by another
build's spconv-compile (`<name>@baseline`, first chip and emulator only),
linked with this kit's runtime: the driver's `ab` phase times both builds
in one process (docs/GPU.md, "A/B against a baseline"). The baseline's
objects must speak this runtime's ABI (their manifests say which).
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "Integration", "CPU"))

import functions  # noqa: E402
import conv_matrix  # noqa: E402

# What a kit's ELF files may need besides the kit's own libraries.
SYSTEM_LIBRARIES = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1",
                    "libpthread.so.0", "libdl.so.2", "librt.so.1", "ld-linux-x86-64.so.2",
                    "libcuda.so.1"}
# Host code and the CPU reference run on the GPU machine's processor, not
# this one: a baseline x86-64 (SSE4.2, POPCNT), never this machine's AVX-512.
KIT_CPU = "x86-64-v2"


def run(cmd, cwd=None, env=None):
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (
            " ".join(cmd), result.returncode, result.stdout[-4000:], result.stderr[-4000:]))
    return result


def runtime_abi_version():
    """SPCONV_RT_ABI_VERSION of the runtime this kit carries."""
    header = os.path.join(ROOT, "runtime", "include", "spconv-rt", "SpConvRuntime.h")
    with open(header) as f:
        for line in f:
            if line.startswith("#define SPCONV_RT_ABI_VERSION "):
                return int(line.split()[2])
    raise RuntimeError("no SPCONV_RT_ABI_VERSION in " + header)


class KitBuilder:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.out = os.path.abspath(args.out)
        self.compiler = os.path.join(self.build, "bin", "spconv-compile")
        self.cc = os.environ.get("CC", "cc")
        self.chips = args.chips.split(",")
        self.baseline = os.path.abspath(args.baseline_compiler) \
            if args.baseline_compiler else None
        self.runtime_abi = runtime_abi_version()
        # The emulator builds are the stand-in's device: the test's small
        # kit has them; a kit for a GPU leaves them out (a quarter of its
        # size) unless asked.
        self.emulator = args.emulator if args.emulator is not None else args.small

    # -- libraries and tools ------------------------------------------------
    def find(self, *candidates):
        for path in candidates:
            if os.path.exists(path):
                return path
        raise RuntimeError("not found: " + ", ".join(candidates))

    def copy_runtime(self):
        lib = os.path.join(self.out, "lib")
        bin_ = os.path.join(self.out, "bin")
        os.makedirs(lib)
        os.makedirs(bin_)
        rt = os.path.join(self.build, "runtime", "lib")
        # The SONAME files (what the objects record as NEEDED).
        for name in ("libspconv_runtime.so.1", "libspconv_runtime_cuda.so.1",
                     "libspconv_store.so.1"):
            shutil.copy2(os.path.realpath(os.path.join(rt, name)), os.path.join(lib, name))
            os.symlink(name, os.path.join(lib, name[: name.index(".so") + 3]))
        # The Python front end's store keys hold it (torch-deploy phase).
        shutil.copy2(os.path.join(rt, "spconv-toolchain-id"), lib)
        shutil.copy2(os.path.realpath(self.find("/usr/lib/llvm-22/lib/libomp.so.5")),
                     os.path.join(lib, "libomp.so.5"))
        os.symlink("libomp.so.5", os.path.join(lib, "libomp.so"))
        for tool in ("spconv-ref", "spconv-npy-compare"):
            shutil.copy2(os.path.join(self.build, "bin", tool), bin_)
        tests = os.path.join(self.build, "runtime", "test", "spconv-runtime-cuda-tests")
        if os.path.exists(tests):
            shutil.copy2(tests, bin_)
        # run.sh puts lib/ on LD_LIBRARY_PATH for the tools; the compiled
        # functions find it through their rpath.

    def build_probes(self):
        """The device probes (probes/*.cu, run by the `probes` phase), built
        with the toolkit's nvcc for the chip they question: wgmma-layouts
        for sm_90a. Without nvcc, or without sm_90 among the chips, the kit
        has none and the phase says so."""
        if "sm_90" not in self.chips:
            return []
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        if not os.access(nvcc, os.X_OK):
            return []
        probes = os.path.join(self.out, "probes")
        os.makedirs(probes)
        run([nvcc, "-O2", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a",
             "-o", os.path.join(probes, "wgmma-layouts"),
             os.path.join(HERE, "probes", "wgmma_layouts.cu")])
        return ["wgmma-layouts"]

    def fill_torch_store(self):
        """A kernel store with test/Python/torch_deploy.py's network's
        kernels, compiled here for the kit's CPU and for CUDA: the `torch-deploy` phase
        runs spconv_mlir.torch from it on the GPU machine, where nothing
        compiles. Needs the test command's torch venv (build/venv-torch);
        without it the kit has no store, and the phase says so."""
        python = os.path.join(self.build, "venv-torch", "bin", "python")
        if not os.access(python, os.X_OK):
            print("kit: note: no %s: the kit carries no kernel store for the torch-deploy "
                  "phase (scripts/test-python.sh --install makes it)" % python)
            return None
        torch_dir = os.path.join(self.out, "torch")
        os.makedirs(torch_dir)
        script = os.path.join(ROOT, "test", "Python", "torch_deploy.py")
        shutil.copy2(script, torch_dir)
        store = os.path.join(torch_dir, "store")
        # --cuda: the same kernels compiled for CUDA, for the phase's CUDA
        # half.
        run([python, script, "fill", "--cuda", os.path.join(torch_dir, "want.pt")],
            env=dict(os.environ, SPCONV_MLIR_PREFIX=self.build, SPCONV_MLIR_CACHE_DIR=store,
                     SPCONV_MLIR_CPU=KIT_CPU, PYTHONPATH=os.path.join(ROOT, "python")))
        shutil.rmtree(os.path.join(store, "staging"), ignore_errors=True)
        return os.path.relpath(store, self.out)

    def copy_driver(self):
        py = os.path.join(self.out, "py")
        shutil.copytree(os.path.join(HERE, "kit"), os.path.join(py, "kit"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(os.path.join(HERE, "functions.py"), py)
        # The Python front end's ABI layer (pure Python), the matrix's cases
        # and reference calls, the workload generator and the networks'
        # input maker: the same code the test suite runs here.
        shutil.copytree(os.path.join(ROOT, "python", "spconv_mlir"),
                        os.path.join(py, "spconv_mlir"),
                        ignore=shutil.ignore_patterns("__pycache__", "_install.py"))
        for path in ("test/Integration/CPU/conv_matrix.py", "bench/workloads/gen_workload.py",
                     "scripts/make_inputs.py", "examples/training/train_minkunet.py"):
            shutil.copy2(os.path.join(ROOT, path), py)
        for source, _ in functions.NETWORKS.values():
            os.makedirs(os.path.join(self.out, "examples"), exist_ok=True)
            shutil.copy2(os.path.join(ROOT, source), os.path.join(self.out, "examples"))
        shutil.copy2(os.path.join(HERE, "run.sh"), os.path.join(self.out, "run.sh"))

    # -- compiling ----------------------------------------------------------
    def target_options(self, fn, target):
        if target.startswith("cuda-"):
            chip = target[len("cuda-"):]
            return ["--target", "cuda", "--gpu-chip", chip, "--gpu-format", "fatbin"] + \
                fn.gpu_options
        if target == "cpu":
            return ["--target", "cpu"]
        options = ["--target", "gpu-emulator"] + fn.gpu_options
        return options + (["--gpu-race-check"] if target == "emu-race" else [])

    def compile_one(self, fn, target, source, tile_table=None):
        d = fn.directory(self.out)
        obj = os.path.join(d, target + ".o")
        manifest = os.path.join(d, target + ".json")
        library = os.path.join(d, target + ".so")
        options = self.target_options(fn, target)
        if tile_table and target != "cpu":
            options += ["--gpu-tiles", tile_table]
        run([fn.compiler or self.compiler, source, "--entry", fn.entry, "--mcpu", KIT_CPU,
             "-o", obj, "--manifest", manifest] + options)
        with open(manifest) as f:
            manifest_data = json.load(f)
        needs = manifest_data["libraries"]
        abi = manifest_data.get("runtime_abi_version")
        if fn.compiler and abi != self.runtime_abi:
            raise RuntimeError("error: the baseline's object needs runtime ABI %s, this kit's "
                               "runtime is ABI %s" % (abi, self.runtime_abi))
        libs = []
        for name in needs:
            if name == "mlir_c_runner_utils":
                raise RuntimeError("%s needs libmlir_c_runner_utils (memrefCopy), which "
                                   "needs libMLIR: it cannot travel in a kit" % fn.name)
            libs.append({"spconv_runtime": "-l:libspconv_runtime.so.1",
                         "spconv_runtime_cuda": "-l:libspconv_runtime_cuda.so.1",
                         "libomp": "-l:libomp.so.5"}[name])
        run([self.cc, "-shared", "-o", library, obj, "-L" + os.path.join(self.out, "lib")] +
            libs + ["-Wl,-rpath,$ORIGIN/../../lib", "-Wl,--no-undefined", "-lm", "-lc"])
        os.remove(obj)
        return target

    def compile_function(self, fn):
        d = fn.directory(self.out)
        os.makedirs(d, exist_ok=True)
        source = os.path.join(ROOT, fn.source) if fn.source else os.path.join(d, "f.mlir")
        if fn.text is not None:
            with open(source, "w") as f:
                f.write(fn.text)
        tile_table = None
        if "tile" in fn.meta:
            tile_table = os.path.join(d, "tiles.json")
            with open(tile_table, "w") as f:
                json.dump({"format": "spconv-gpu-tiles/1", "entries": [fn.meta["tile"]]}, f)
        built, errors = [], {}
        for target in fn.targets:
            try:
                built.append(self.compile_one(fn, target, source, tile_table))
            except RuntimeError as e:
                lines = str(e).strip().splitlines()
                named = [l for l in lines if "error" in l.lower()]
                errors[target] = (named or lines)[-1][:400]
        return fn, built, errors

    def describe_baseline(self):
        """The baseline compiler and the commit its build was configured
        from (its CMakeCache's source directory), as the report names it."""
        commit = "unknown"
        cache = os.path.join(os.path.dirname(os.path.dirname(self.baseline)), "CMakeCache.txt")
        if os.path.exists(cache):
            with open(cache) as f:
                for line in f:
                    if line.startswith("CMAKE_HOME_DIRECTORY:"):
                        source = line.split("=", 1)[1].strip()
                        commit = subprocess.run(
                            ["git", "-C", source, "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip() or commit
        return {"compiler": self.baseline, "commit": commit}

    # -- checks -------------------------------------------------------------
    def elf_files(self):
        for base, _, files in os.walk(self.out):
            for name in files:
                path = os.path.join(base, name)
                if os.path.islink(path):
                    continue
                with open(path, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        yield path

    def check_dependencies(self):
        own = set(os.listdir(os.path.join(self.out, "lib")))
        problems = []
        for path in self.elf_files():
            dynamic = run(["readelf", "-d", path]).stdout
            for line in dynamic.splitlines():
                if "(NEEDED)" in line:
                    name = line.split("[", 1)[1].rstrip("]")
                    if name not in own and name not in SYSTEM_LIBRARIES:
                        problems.append("%s needs %s" % (os.path.relpath(path, self.out), name))
        return problems

    def size_bytes(self):
        return sum(os.path.getsize(os.path.join(b, n)) for b, _, fs in os.walk(self.out)
                   for n in fs if not os.path.islink(os.path.join(b, n)))

    # -- the whole kit ------------------------------------------------------
    def build_kit(self):
        if os.path.exists(self.out):
            shutil.rmtree(self.out)
        os.makedirs(self.out)
        self.copy_runtime()
        self.copy_driver()
        probes = self.build_probes()
        cuda_targets = ["cuda-" + chip for chip in self.chips]
        fns = functions.kit_functions(self.args.small, conv_matrix.cases(), cuda_targets)
        # Tiles are tuned for the first chip only: the sweep times the chip
        # it runs on, and the GPUs this project gets are the first's.
        fns += functions.tile_functions(self.args.small, cuda_targets[:1])
        if self.baseline:
            if not os.access(self.baseline, os.X_OK):
                print("kit: error: --baseline-compiler %s is not an executable" % self.baseline)
                return 1
            baseline = functions.baseline_functions(fns, self.baseline, cuda_targets[0])
            if self.args.small:
                baseline = [fn for fn in baseline
                            if fn.meta["of"] in functions.SMALL_BASELINE]
            fns += baseline
        torch_store = self.fill_torch_store()
        if not self.emulator:
            for fn in fns:
                fn.targets = [t for t in fn.targets if not t.startswith("emu")]
        record = {}
        with concurrent.futures.ThreadPoolExecutor(self.args.jobs) as pool:
            for fn, built, errors in pool.map(self.compile_function, fns):
                record[fn.name] = {"group": fn.group, "entry": fn.entry, "targets": built,
                                   "errors": errors, "meta": fn.meta,
                                   "dir": os.path.relpath(fn.directory(self.out), self.out)}
                state = "ok" if not errors else "FAILED " + ", ".join(errors)
                print("  %-40s %s" % (fn.name, state), flush=True)
        commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                                capture_output=True, text=True).stdout.strip()
        kit = {"format": "spconv-gpu-kit/1", "small": self.args.small,
               "emulator": self.emulator,
               "built": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit, "chips": self.chips, "host_cpu": KIT_CPU,
               "probes": probes, "torch_store": torch_store, "functions": record}
        if self.baseline:
            kit["baseline"] = self.describe_baseline()
        with open(os.path.join(self.out, "kit.json"), "w") as f:
            json.dump(kit, f, indent=1, sort_keys=True)
        failed = sorted(n for n, r in record.items() if r["errors"])
        problems = self.check_dependencies()
        size = self.size_bytes()
        print("kit: %s, %d functions, %.1f MiB (limit %d MiB)" % (
            self.out, len(record), size / 2**20, self.args.max_mib))
        status = 0
        for problem in problems:
            print("kit: error: %s (only glibc, libstdc++, libgcc, libm, libcuda and the "
                  "kit's own libraries may be needed)" % problem)
            status = 1
        if size > self.args.max_mib * 2**20:
            print("kit: error: %.1f MiB is over the %d MiB a GPU machine's call carries"
                  % (size / 2**20, self.args.max_mib))
            status = 1
        for name in failed:
            print("kit: %s: %s does not compile: %s" % (
                "note" if self.args.allow_missing else "error", name,
                "; ".join("%s: %s" % kv for kv in record[name]["errors"].items())))
            if not self.args.allow_missing:
                status = 1
        return status


def main():
    # gpu-module-to-binary links libdevice (exp, log in kernels) only from
    # the toolkit these name.
    if not any(os.environ.get(v) for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")):
        ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
        os.environ["CUDA_ROOT"] = os.path.dirname(os.path.dirname(os.path.realpath(ptxas)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True, help="the spconv-mlir build directory")
    parser.add_argument("--out", required=True, help="the kit's directory (replaced)")
    parser.add_argument("--small", action="store_true",
                        help="a few functions of each group (the test command's kit)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--chips", default="sm_90,sm_80",
                        help="CUDA chips to build objects for, comma-separated")
    parser.add_argument("--emulator", action=argparse.BooleanOptionalAction, default=None,
                        help="also build the GPU emulator builds, so that run.sh --stand-in "
                             "works (default: with --small only)")
    parser.add_argument("--max-mib", type=int, default=48)
    parser.add_argument("--baseline-compiler", metavar="SPCONV_COMPILE",
                        help="another build's spconv-compile: the kit also carries the "
                             "networks and layers it compiles, for the A/B phase")
    parser.add_argument("--allow-missing", action="store_true",
                        help="record functions that do not compile instead of failing")
    return KitBuilder(parser.parse_args()).build_kit()


if __name__ == "__main__":
    sys.exit(main())

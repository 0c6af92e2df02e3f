"""What the two static kernel reports share (scripts/ptxas-report.py and
scripts/sass-report.py): compiling an MLIR file with spconv-to-cuda, reading
the embedded PTX, assembling it with ptxas -v, and the occupancy that the
resources allow."""

import os
import re
import subprocess
import sys
import tempfile


def run(args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("%s failed (%d):\n%s" % (" ".join(args), result.returncode,
                                          result.stderr[-4000:]))
    return result


def unescape(text):
    """An MLIR string attribute's body (\\XX hex escapes, \\\\, \\") as bytes."""
    out = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "\\":
            if text[i + 1] in "\\\"":
                out.append(ord(text[i + 1]))
                i += 2
            else:
                out.append(int(text[i + 1:i + 3], 16))
                i += 3
        else:
            out += text[i].encode()
            i += 1
    return bytes(out)


def compile_kernels(spconv_opt, mlir, chip, block_size, options):
    """The PTX that spconv-to-cuda embeds for `mlir` on `chip`, and the
    kernel IR (the module after spconv-gpu-runtime-calls, before NVVM)."""
    result = run([spconv_opt, mlir,
                  "--spconv-to-cuda=chip=%s format=isa block-size=%d%s" % (
                      chip, block_size, "".join(" " + o for o in options)),
                  "--mlir-print-ir-after=spconv-gpu-runtime-calls"])
    objects = re.findall(r'assembly = "((?:[^"\\]|\\.)*)"', result.stdout)
    if len(objects) != 1:
        sys.exit("%s: expected one embedded PTX module, found %d" % (mlir, len(objects)))
    return unescape(objects[0]), result.stderr


FUNCTION = re.compile(r"Compiling entry function '(\w+)' for '(\w+)'")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers(?:, used \d+ barriers)?(?:, (\d+) bytes lmem)?"
                  r"(?:, (\d+) bytes smem)?")

# Per-SM limits of the architectures reported (CUDA occupancy calculator):
# 64 resident warps, 32 blocks, 64K 32-bit registers allocated per warp in
# units of 256, shared memory per SM and reserved per block.
ARCH = {
    "sm_80": {"warps": 64, "blocks": 32, "registers": 65536, "smem": 164 * 1024},
    "sm_90": {"warps": 64, "blocks": 32, "registers": 65536, "smem": 228 * 1024},
}
SMEM_RESERVED = 1024


def occupancy(chip, registers, smem, block_size):
    """Resident warps per SM over the maximum, at `block_size` threads."""
    arch = ARCH.get(chip)
    if not arch:
        return None
    warps = -(-block_size // 32)
    per_warp = -(-max(registers, 1) * 32 // 256) * 256
    by_registers = (arch["registers"] // per_warp) // warps
    by_smem = arch["smem"] // (smem + SMEM_RESERVED) if smem else arch["blocks"]
    blocks = min(arch["blocks"], arch["warps"] // warps, by_registers, by_smem)
    return blocks * warps / arch["warps"]


def assemble(ptxas, ptx, chip, cubin=None):
    """Per kernel of `ptx`: registers, spill stores, spill loads, stack, lmem,
    smem. Keeps the object at `cubin` when given."""
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, "k.ptx")
        with open(source, "wb") as f:
            f.write(ptx)
        log = run([ptxas, "-v", "-arch=" + chip, source,
                   "-o", cubin or os.path.join(work, "k.cubin")]).stderr
    kernels = {}
    name = None
    for line in log.splitlines():
        if m := FUNCTION.search(line):
            name = m.group(1)
            kernels[name] = {"registers": 0, "spill_stores": 0,
                             "spill_loads": 0, "stack": 0, "lmem": 0, "smem": 0}
        elif name and (m := FRAME.search(line)):
            kernels[name].update(stack=int(m.group(1)),
                                 spill_stores=int(m.group(2)),
                                 spill_loads=int(m.group(3)))
        elif name and (m := USED.search(line)):
            kernels[name].update(registers=int(m.group(1)),
                                 lmem=int(m.group(2) or 0),
                                 smem=int(m.group(3) or 0))
    return kernels


# Dynamic shared memory (spconv-gpu-dynamic-shared-memory) on a kernel.
DYNAMIC_SHARED = re.compile(r"^\s*gpu\.func @(\w+)\(.*spconv\.dynamic_shared_memory = (\d+)")


def add_dynamic_shared(kernels, ir):
    """Adds each kernel's dynamic shared memory (from the kernel IR) to the
    static shared memory ptxas reported for it (assemble's "smem")."""
    for m in map(DYNAMIC_SHARED.search, ir.splitlines()):
        if m and m.group(1) in kernels:
            kernels[m.group(1)]["smem"] += int(m.group(2))
    return kernels


# A tiled kernel's threads per block, from its spconv.tile attribute.
TILE_THREADS = re.compile(r"^\s*gpu\.func @(\w+)\(.*spconv\.tile = \{[^}]*\bthreads = (\d+)")


def tile_threads(ir):
    """kernel -> threads per block of the tiled kernels of the printed IR."""
    return {m.group(1): int(m.group(2))
            for m in map(TILE_THREADS.search, ir.splitlines()) if m}

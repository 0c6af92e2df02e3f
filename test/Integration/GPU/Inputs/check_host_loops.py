"""check_host_loops.py FILE.ll [--launches]: fails if the LLVM IR allocates
stack in a loop: an alloca in a block that can reach itself (a dynamic
stack allocation each time the loop runs, freed only when the function
returns); with --launches, also if it launches a kernel in a loop. OpenMP's outlined regions
(`..omp_par`, made by the IR builder after our hoisting) are skipped: each
thread runs one once per region, and its slots die with its frame."""
import re
import sys

LAUNCHES = "--launches" in sys.argv[2:]


def functions(path):
    """(name, {block: (allocas, successors)}) per function definition."""
    name, blocks, block = None, {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("define "):
                name, blocks, block = line.split("@")[1].split("(")[0], {}, "entry"
                blocks[block] = ([], set())
            elif name is None:
                continue
            elif line.startswith("}"):
                yield name, blocks
                name = None
            elif re.match(r"^[\w.$-]+:", line):
                block = line.split(":")[0]
                blocks[block] = ([], set())
            else:
                if " alloca " in line or (LAUNCHES and "@mgpuLaunchKernel(" in line):
                    blocks[block][0].append(line.strip())
                if re.match(r"\s+(br|switch|indirectbr|invoke|callbr) ", line):
                    blocks[block][1].update(re.findall(r"label %([\w.$-]+)", line))


def in_loop(blocks, start):
    seen, work = set(), list(blocks[start][1])
    while work:
        b = work.pop()
        if b == start:
            return True
        if b in seen or b not in blocks:
            continue
        seen.add(b)
        work.extend(blocks[b][1])
    return False


bad = []
for name, blocks in functions(sys.argv[1]):
    if "omp_par" in name:
        continue
    for block, (allocas, _) in blocks.items():
        if allocas and in_loop(blocks, block):
            bad += ["%s, %s: %s" % (name, block, a) for a in allocas]
if bad:
    sys.exit("in loops:\n" + "\n".join(bad))
print("ok")

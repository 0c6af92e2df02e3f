"""Reading a kernel's machine code: scripts/sass-report.py's analysis.

Input is nvdisasm's listing (`nvdisasm -c`); nothing here runs a tool, so
test/Scripts checks it on listings written by hand. The steps:

- `parse_listing`: kernels, their instructions (address, guard predicate,
  opcode, operands) and branch targets resolved from nvdisasm's labels.
- `loops`: natural loops from backward branches (ptxas lays a loop out as
  one address range, header first, latch last), nested by containment.
- `trip_count`: a loop's trip count from its latch: the predicate's
  ISETP against an immediate, the counter's one IADD3/VIADD step and its
  initial MOV before the loop. A counter that starts at a register (a
  thread index) is taken to start at 0, an upper bound marked estimated;
  a bound that is a kernel parameter makes the count unknown.
- `hot_loop`: one step of the kernel's main loop: inside the grid-stride
  loop over the tiles, the loop over the math (one visited offset of a
  tiled conv, all its channel slices; one slice of a pipelined one, whose
  copying loop is preferred to its fallback for unaligned data).
- `profile`: per step of the hot loop and per warp, instructions by class,
  inner loops multiplied by their trip counts, every instruction of a
  forward-branch region counted (both arms: an upper bound); an
  instruction guarded by the false predicate (ptxas's padding) as an
  issue slot only.
- `load_chain`: the longest chain of global loads in one step where each
  load's address depends on the previous one's value.
- `simulate`: an in-order scoreboard walk of one warp over consecutive
  steps with sass_costs's latencies: the exposed latency per step.
"""

import re

import sass_costs

INSTRUCTION = re.compile(
    r"^\s*/\*([0-9a-f]+)\*/\s+(?:(@!?U?P[T0-9]+)\s+)?([A-Z][A-Za-z0-9_.]*)\s*(.*?)\s*;")
LABEL = re.compile(r"^(\.L_x_\d+):")
SECTION = re.compile(r"^\.text\.(\S+):")
TARGET = re.compile(r"`\((\.L_x_\d+)\)")
REGISTER = re.compile(r"\bR(\d+)(\.64)?\b")
IMMEDIATE = re.compile(r"^-?0x[0-9a-f]+$|^-?\d+$")


class Instruction:
    def __init__(self, address, guard, opcode, operands):
        self.address = address
        self.guard = guard            # "@P0", "@!P3" or None
        self.opcode = opcode          # "HMMA.16816.F32"
        self.operands = operands      # list of operand strings
        self.target = None            # branch target address

    @property
    def base(self):
        return self.opcode.split(".")[0]

    def __repr__(self):
        return "%04x %s %s %s" % (self.address, self.guard or "", self.opcode,
                                  ", ".join(self.operands))


def split_operands(text):
    """Operands separated by top-level commas (brackets may hold '+')."""
    out, depth, current = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current.strip())
    return out


def parse_listing(text):
    """kernel name -> [Instruction] in address order."""
    kernels, name, labels, pending = {}, None, {}, []
    for line in text.splitlines():
        if m := SECTION.match(line):
            name = m.group(1)
            kernels[name] = []
            continue
        if m := LABEL.match(line):
            pending.append(m.group(1))
            continue
        m = INSTRUCTION.match(line)
        if not m or name is None:
            continue
        address = int(m.group(1), 16)
        for label in pending:
            labels[(name, label)] = address
        pending = []
        kernels[name].append(Instruction(address, m.group(2), m.group(3),
                                         split_operands(m.group(4))))
    for name, body in kernels.items():
        for ins in body:
            for operand in ins.operands:
                if t := TARGET.search(operand):
                    ins.target = labels.get((name, t.group(1)))
                elif ins.base in ("BRA", "BSSY") and IMMEDIATE.match(operand):
                    ins.target = int(operand, 16)  # cuobjdump-style listings
    return kernels


# ------------------------------------------------------------------ loops
class Loop:
    def __init__(self, start, end):
        self.start, self.end = start, end   # header and latch addresses
        self.parent = None
        self.children = []

    def contains(self, address):
        return self.start <= address <= self.end

    def __repr__(self):
        return "loop[%04x..%04x]" % (self.start, self.end)


def loops(body):
    """The natural loops of `body`, outermost first, nested."""
    ranges = {}
    for ins in body:
        if ins.base == "BRA" and ins.target is not None and ins.target < ins.address:
            ranges[ins.target] = max(ranges.get(ins.target, 0), ins.address)
    found = sorted((Loop(s, e) for s, e in ranges.items()),
                   key=lambda l: (l.start, -l.end))
    for loop in found:
        enclosing = [o for o in found if o is not loop and o.start <= loop.start
                     and loop.end <= o.end]
        if enclosing:
            loop.parent = min(enclosing, key=lambda o: o.end - o.start)
            loop.parent.children.append(loop)
    return found


def value(operand):
    """An integer operand's value, or None."""
    if operand in ("RZ", "URZ"):
        return 0
    if IMMEDIATE.match(operand):
        return int(operand, 16) if "x" in operand else int(operand)
    return None


def writes(ins):
    """The registers `ins` writes (R numbers), by its destination's width."""
    if not ins.operands or ins.base in STORES | {"BRA", "BAR", "BSSY", "BSYNC",
                                                "EXIT", "DEPBAR", "LDGSTS",
                                                "LDGDEPBAR", "NOP", "RED"}:
        return []
    m = re.fullmatch(r"R(\d+)", ins.operands[0])
    if not m:
        return []
    first = int(m.group(1))
    width = 1
    parts = ins.opcode.split(".")
    if "64" in parts or "WIDE" in parts or ins.base == "CS2R":
        width = 2
    if "128" in parts:
        width = 4
    if ins.base == "LDSM":
        width = int(parts[-1]) if parts[-1].isdigit() else 1
    if ins.base == "HMMA":
        width = 4 if parts[-1] == "F32" or "F32" in parts[2:3] else 2
    return list(range(first, first + width))


def reads(ins, operands=None):
    """The registers `ins` reads among `operands` (default: its sources)."""
    if operands is None:
        operands = ins.operands if not writes(ins) else ins.operands[1:]
    regs = []
    for operand in operands:
        for m in REGISTER.finditer(operand):
            n = int(m.group(1))
            regs += [n, n + 1] if m.group(2) else [n]
    return regs


def last_writer(body, index, register, stop):
    """The last instruction before body[index] at or after address `stop`
    whose first operand is `register` (a predicate or register name)."""
    for j in range(index - 1, -1, -1):
        ins = body[j]
        if ins.address < stop:
            return None
        if ins.operands and ins.operands[0] == register:
            return j
    return None


COMPARE = {"LT": lambda a, b: a < b, "LE": lambda a, b: a <= b,
           "GT": lambda a, b: a > b, "GE": lambda a, b: a >= b,
           "NE": lambda a, b: a != b, "EQ": lambda a, b: a == b}


def trip_count(body, loop, limit=1 << 20):
    """(trips, exact) of `loop`, or (None, False) when unknown."""
    index = next(i for i, ins in enumerate(body) if ins.address == loop.end)
    latch = body[index]
    if latch.guard:
        # @P BRA header: the loop goes on while P; @!P BRA: while not P.
        negated = latch.guard.startswith("@!")
        guard = latch.guard
    else:
        # An unconditional latch after a guarded exit (ptxas writes
        # "@P CALL.REL.NOINC exit; BRA header"): the loop ends when the
        # exit's guard holds.
        exit_ = body[index - 1] if index else None
        if (exit_ is None or not exit_.guard or exit_.target is None
                or loop.contains(exit_.target)
                or exit_.base not in ("BRA", "CALL")):
            return None, False
        negated = not exit_.guard.startswith("@!")
        guard = exit_.guard
        index -= 1
    predicate = guard.lstrip("@!")
    j = last_writer(body, index, predicate, loop.start)
    # "PLOP3.LUT P0, PT, PT, PT, UP2, 0x80": P0 is a copy of a uniform
    # predicate, which the uniform datapath's compare wrote; with 0x40, its
    # negation (the table's bits 7 and 6: the third input true, false).
    if j is not None and body[j].opcode == "PLOP3.LUT":
        sources = [o for o in body[j].operands[2:5] if o != "PT"]
        if (len(sources) != 1 or body[j].operands[4] != sources[0]
                or body[j].operands[5] not in ("0x80", "0x40")):
            return None, False
        negated ^= sources[0].startswith("!") ^ (body[j].operands[5] == "0x40")
        predicate = sources[0].lstrip("!")
        j = last_writer(body, j, predicate, loop.start)
    # A 64-bit compare ends in an .EX step that folds the low half's result
    # in; the low half's ISETP is the comparison to read.
    while j is not None and ".EX" in body[j].opcode:
        j = last_writer(body, j, predicate, loop.start)
    if j is None or body[j].base not in ("ISETP", "UISETP"):
        return None, False
    compare = body[j]
    relation = compare.opcode.split(".")[1]
    counter, bound = compare.operands[2], value(compare.operands[3])
    if (relation not in COMPARE or bound is None
            or not re.fullmatch(r"U?R\d+", counter)):
        return None, False
    steps = [(k, ins) for k, ins in enumerate(body)
             if loop.contains(ins.address) and ins.operands
             and ins.operands[0] == counter]
    if len(steps) != 1 or steps[0][1].base not in ("IADD3", "VIADD", "IADD",
                                                   "UIADD3"):
        return None, False
    k, step_ins = steps[0]
    # Sources, without carry-out predicates (P1, UP2) and zero registers.
    sources = [o for o in step_ins.operands[1:]
               if not re.fullmatch(r"U?P\d+|U?PT", o)]
    if counter not in sources:
        return None, False
    immediates = [value(o) for o in sources
                  if o != counter and o not in ("RZ", "URZ")]
    if len(immediates) != 1 or immediates[0] in (None, 0):
        return None, False
    step = immediates[0]
    start_index = next(i for i, ins in enumerate(body) if ins.address == loop.start)
    init_writer = last_writer(body, start_index, counter, 0)
    init, exact = 0, False
    if init_writer is not None:
        w = body[init_writer]
        if w.base in ("MOV", "UMOV") and value(w.operands[1]) is not None:
            init, exact = value(w.operands[1]), True
        elif w.opcode == "IMAD.MOV.U32" and value(w.operands[3]) is not None:
            init, exact = value(w.operands[3]), True
    post = k < j  # the compare reads the incremented counter
    keep_going = COMPARE[relation]
    v = init
    for trips in range(1, limit):
        if post:
            v += step
        taken = keep_going(v, bound)
        if not post:
            v += step
        if taken == negated:  # the latch falls through: the loop ends
            return trips, exact
    return None, False


def hot_loop(body, found):
    """One step of a tiled kernel's main loop: inside the outermost loop
    with math (MMA or FFMA), the grid-stride loop over the tiles, the loop
    that holds the math (the offsets a tile visits, or the steps of a
    pipeline); the outermost loop itself when nothing inside it loops over
    the math; None without math in a loop. Of several such loops (a
    pipeline and its fallback for unaligned sources), one that issues
    cp.async copies, the form aligned data takes; then the largest."""
    addresses = [ins.address for ins in body if classify(ins) in ("mma", "ffma")]
    math = [l for l in found if any(l.contains(a) for a in addresses)]
    if not math:
        return None
    outermost = max((l for l in math if l.parent is None),
                    key=lambda l: l.end - l.start)
    inner = [l for l in outermost.children if l in math]
    if inner:
        def copies(l):
            return any(classify(i) == "async_copy" for i in region(body, l))
        return max(inner, key=lambda l: (copies(l), l.end - l.start))
    return outermost


# ---------------------------------------------------------- classification
STORES = {"STS", "STG", "ST", "STL"}
GLOBAL_LOADS = {"LDG", "LD"}


def never_runs(ins):
    """Whether `ins` is guarded by the constant false predicate: ptxas pads
    with such instructions (three `@!PT LDS RZ, [RZ]` before each
    LDGSTS); they take an issue slot and do nothing."""
    return ins.guard in ("@!PT", "@!UPT")


def classify(ins):
    if never_runs(ins):
        return "other"
    base = ins.base
    if base in ("HMMA", "HGMMA", "IMMA", "DMMA", "BMMA"):
        return "mma"
    if base in ("FFMA", "FFMA2"):
        return "ffma"
    if base in ("FADD", "FMUL", "FMNMX"):
        return "fp32"
    if base in GLOBAL_LOADS:
        return "global_load"
    if base == "LDGSTS":
        return "async_copy"
    if base in ("STG", "ST", "RED", "ATOMG"):
        return "global_store"
    if base in ("LDS", "LDSM"):
        return "shared_load"
    if base in ("STS", "ATOMS"):
        return "shared_store"
    if base == "BAR":
        return "barrier"
    if ".X" in ins.opcode or ".EX" in ins.opcode or ins.opcode.endswith(".X"):
        return "wide_index"
    return "other"


def lane_bytes(ins):
    """Bytes per thread of a memory instruction, from its width suffix."""
    parts = ins.opcode.split(".")
    for part, size in (("128", 16), ("64", 8), ("U16", 2), ("S16", 2),
                       ("U8", 1), ("S8", 1)):
        if part in parts:
            return size
    return 4


def mma_flops(ins):
    """(FLOP per warp instruction, multiplicand type, is_wgmma)."""
    parts = ins.opcode.split(".")
    if ins.base == "HGMMA":
        m, n, k = (int(x) for x in parts[1].split("x"))
        kind = "tf32" if "TF32" in parts else "bf16" if "BF16" in parts else "f16"
        return 2 * m * n * k // 4, kind, True  # a warpgroup's 4 warps issue it
    shapes = {"16816": (16, 8, 16), "1688": (16, 8, 8), "1684": (16, 8, 4),
              "884": (8, 8, 4), "16832": (16, 8, 32)}
    if len(parts) < 2 or parts[1] not in shapes:
        raise ValueError("sass_model: unknown MMA shape in %s" % ins.opcode)
    m, n, k = shapes[parts[1]]
    kind = "tf32" if "TF32" in parts else "bf16" if "BF16" in parts else "f16"
    return 2 * m * n * k, kind, False


def region(body, loop):
    return [ins for ins in body if loop.contains(ins.address)]


def weights(body, loop, found):
    """address -> how often one step of `loop` runs it; and whether an inner
    trip count was estimated or unknown."""
    inner = [l for l in found if l is not loop and loop.start <= l.start
             and l.end <= loop.end]
    trips, estimated = {}, False
    for l in inner:
        t, exact = trip_count(body, l)
        if t is None:
            t, estimated = 1, True
        estimated |= not exact
        trips[l] = t
    out = {}
    for ins in region(body, loop):
        w = 1
        for l, t in trips.items():
            if l.contains(ins.address):
                w *= t
        out[ins.address] = w
    return out, estimated


def profile(body, loop, found):
    """Dynamic counts per step of `loop`, per warp."""
    w, estimated = weights(body, loop, found)
    counts = {"instructions": 0, "mma": 0, "mma_flop": 0, "ffma": 0,
              "global_load": 0, "global_load_bytes": 0, "async_copy": 0,
              "async_copy_bytes": 0, "global_store": 0, "shared_load": 0,
              "shared_store": 0, "barrier": 0, "wide_index": 0, "fp32": 0,
              "other": 0, "mma_kind": None, "wgmma": False,
              "shared_waves": 0, "l1_waves": 0, "estimated": estimated}
    for ins in region(body, loop):
        n = w[ins.address]
        kind = classify(ins)
        counts["instructions"] += n
        counts[kind] += n
        if kind == "mma":
            flop, mkind, wg = mma_flops(ins)
            counts["mma_flop"] += n * flop
            counts["mma_kind"], counts["wgmma"] = mkind, wg
        if kind in ("global_load", "async_copy"):
            counts[kind + "_bytes"] += n * lane_bytes(ins)
        counts["shared_waves"] += n * shared_wavefronts(ins)
        counts["l1_waves"] += n * l1_wavefronts(ins)
    counts["pipeline_depth"] = pipeline_depth(region(body, loop))
    counts["load_chain"] = load_chain(region(body, loop))
    return counts


def pipeline_depth(instructions):
    """cp.async groups left in flight when a step waits: N of the step's
    `DEPBAR.LE SB0, N` when it issues LDGSTS copies, else 0."""
    if not any(i.base == "LDGSTS" for i in instructions):
        return 0
    waits = [value(i.operands[1]) for i in instructions
             if i.base == "DEPBAR" and len(i.operands) > 1 and i.operands[0] == "SB0"]
    waits = [v for v in waits if v is not None]
    return min(waits) if waits else 0


def address_registers(ins):
    """Registers of the global address of a load or async copy."""
    # "[R4.64+0x8]", or on sm_90 "desc[UR6][R4.64+0x8]"; not "c[0x0][0x10]".
    memory = [o for o in ins.operands if "[" in o and not o.startswith("c[")]
    if not memory:
        return []
    # LDGSTS [shared], [global]: the global address is the second.
    return reads(ins, [memory[-1]])


def load_chain(instructions):
    """The longest chain of dependent global loads in one pass."""
    depth = {}  # register -> global loads its value depends on
    longest = 0
    for ins in instructions:
        kind = classify(ins)
        if kind in ("global_load", "async_copy"):
            d = 1 + max((depth.get(r, 0) for r in address_registers(ins)), default=0)
            longest = max(longest, d)
        else:
            d = max((depth.get(r, 0) for r in reads(ins)), default=0)
        # A guarded write is taken to replace the value: ptxas if-converts
        # short branches, and their consumers carry the same guard.
        for r in writes(ins):
            depth[r] = d
    return longest


# ------------------------------------------------------------- the model
def latency_class(ins):
    kind = classify(ins)
    if kind == "global_load":
        return "global"
    if kind == "shared_load":
        return "shared"
    if kind == "mma":
        return "mma"
    if ins.base in ("S2R", "MUFU", "SHFL"):
        return "special"
    return "alu"


def dynamic_sequence(body, loop, found):
    """One step of `loop` as executed: inner loops unrolled by their trips."""
    inner = sorted((l for l in found if l is not loop and loop.start <= l.start
                    and l.end <= loop.end and l.parent is loop),
                   key=lambda l: l.start)
    out = []
    instructions = region(body, loop)
    i = 0
    while i < len(instructions):
        ins = instructions[i]
        child = next((l for l in inner if l.start == ins.address), None)
        if child is None:
            out.append(ins)
            i += 1
            continue
        t = trip_count(body, child)[0] or 1
        piece = dynamic_sequence(body, child, found)
        out += piece * t
        i += len(region(body, child))
    return out


def simulate(body, loop, found, chip_costs, steps=4):
    """Cycles per step of one warp issuing in order, each instruction
    waiting for its sources (a scoreboard), at steady state."""
    latency = chip_costs["latency"]
    sequence = dynamic_sequence(body, loop, found)
    ready = {}       # register -> cycle its value is ready
    groups = []      # completion cycle of each committed cp.async group
    open_group = 0   # completion of the copies issued since the last commit
    t, marks = 0, []
    for _ in range(steps):
        for ins in sequence:
            start = max([t + 1] + [ready.get(r, 0) for r in reads(ins)])
            if ins.base == "DEPBAR" and len(ins.operands) > 1:
                keep = value(ins.operands[1]) or 0
                if len(groups) > keep:
                    start = max(start, groups[len(groups) - keep - 1])
            if ins.base == "LDGDEPBAR":
                groups.append(open_group)
                open_group = 0
            if ins.base == "BAR":
                start += latency["barrier"]
            t = start
            if classify(ins) == "async_copy":
                open_group = max(open_group, t + latency["global"])
            done = t + latency[latency_class(ins)]
            for r in writes(ins):
                ready[r] = max(ready.get(r, 0), done) if ins.guard else done
        marks.append(t)
    if steps >= 3:
        return (marks[-1] - marks[1]) / (steps - 2)
    return marks[-1] / steps


def wavefronts(ins):
    """128-byte wavefronts of one warp's access: 32 lanes x its width."""
    return max(1, lane_bytes(ins) * 32 // sass_costs.WAVEFRONT_BYTES)


def shared_wavefronts(ins):
    """Cycles of the SM's shared-memory pipe one warp instruction takes,
    conflict-free (bank conflicts are not visible in the machine code)."""
    kind = classify(ins)
    if ins.base == "LDSM" and kind == "shared_load":
        count = ins.opcode.split(".")[-1]
        return int(count) if count.isdigit() else 1
    if kind in ("shared_load", "shared_store", "async_copy"):
        return wavefronts(ins)
    return 0


def l1_wavefronts(ins):
    """Cycles of the SM's L1 data stage one warp instruction takes."""
    if classify(ins) in ("global_load", "global_store", "async_copy"):
        return wavefronts(ins)
    return 0


def pipe_cycles(counts, chip_costs, warps):
    """Cycles one step of a block (`warps` warps) keeps each pipe of an SM
    busy: per-SMSP pipes spread over the SM's sub-partitions."""
    smsp = chip_costs["smsp_per_sm"]
    mma = 0.0
    if counts["mma"]:
        kind = counts["mma_kind"]
        if counts["wgmma"]:
            mma = counts["mma_flop"] * warps / chip_costs["wgmma_flop_per_sm"][kind]
        else:
            mma = counts["mma_flop"] * warps / (chip_costs["mma_flop_per_smsp"][kind] * smsp)
    return {
        "issue": counts["instructions"] * warps * sass_costs.ISSUE_CYCLES / smsp,
        "mma": mma,
        "ffma": counts["ffma"] * warps * chip_costs["ffma_cycles"] / smsp,
        "shared": counts["shared_waves"] * warps,
        "l1": counts["l1_waves"] * warps,
    }

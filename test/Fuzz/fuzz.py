#!/usr/bin/env python3
"""Grammar-aware mutation fuzzer for spconv-opt.

Takes the seed corpus (test/Fuzz/corpus/, examples/*.mlir and every
test/**/*.mlir, split at `// -----`), mutates it with edits that know the
spconv syntax (geometry lists and kinds, grids, tensor shapes and element
types, op names, operands, SSA values, select/if wrapping, lines) and runs
each mutant through parse + verify and one pipeline of spconv-opt. A finding
is any of:

  crash          a signal, "LLVM ERROR", an assertion, "PLEASE submit a bug report"
  oom            the process ran out of the memory limit (--mem-limit)
  hang           the per-input time limit (--timeout) ran out
  silent-failure spconv-opt failed without an "error:" diagnostic
  invalid-ir     a pass left IR that does not verify (the pipeline fails with
                 verification after every pass and succeeds without it)
  bad-output     the printed output does not parse and verify again, or the
                 generic form of a verified input does not

An input the verifier rejects, or a pass that refuses it with a diagnostic, is
not a finding. Results depend only on --seed and the run index, never on
timing or --jobs: --time only limits how many inputs run.

Findings go to --out (one folder each: input.mlir, minimised by deleting
lines while the same failure remains, original.mlir, command.txt,
stderr.txt, info.json); the exit code is 1 when there is any.

  test/Fuzz/fuzz.py --spconv-opt build/bin/spconv-opt --time 3600 --jobs 2
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import re
import resource
import shutil
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# --------------------------------------------------------------------------
# Pipelines: name -> (spconv-opt arguments, weight). Options are drawn per
# input (see pipeline_args).
PIPELINES = [
    "parse",          # parse, verify, print; the output and its generic form reparse
    "canonicalize",
    "cse",
    "decompose",
    "front-end",      # the pipelines' front end: inline ... share-rulebooks, cse, fuse-epilogues
    "share-rulebooks",
    "profile",
    "to-scf",         # decompose, convert-spconv-to-scf (no canonicalization first)
    "to-cpu",
    "to-gpu-emulator",
    "to-cuda",
    "gpu-passes",     # spconv-to-scf for the GPU, then the GPU passes one by one
    "loop-passes",    # one of our loop / GPU passes on the input as it is
]


def pipeline_args(name, rng, have_ptxas):
    if name == "parse":
        return []
    if name == "canonicalize":
        return ["--canonicalize"]
    if name == "cse":
        return ["--cse"]
    if name == "decompose":
        return ["--spconv-decompose"]
    if name == "front-end":
        return ["--pass-pipeline=builtin.module(inline,func.func(convert-elementwise-to-linalg),"
                "canonicalize,func.func(spconv-decompose),canonicalize,"
                "func.func(spconv-share-rulebooks),cse,func.func(spconv-fuse-epilogues))"]
    if name == "share-rulebooks":
        return ["--spconv-share-rulebooks"]
    if name == "profile":
        return ["--spconv-decompose", "--spconv-profile"]
    if name == "to-scf":
        opts = []
        if rng.random() < 0.3:
            opts.append("subm-search=" + rng.choice(["hash", "sorted"]))
        if rng.random() < 0.3:
            opts.append("target=" + rng.choice(["cpu", "gpu"]))
        if rng.random() < 0.2:
            opts.append("block-size=" + str(rng.choice([1, 2, 7, 64, 256])))
        if rng.random() < 0.2:
            opts.append("chunk-bytes=" + str(rng.choice([1, 64, 4096, 2097152])))
        p = "--convert-spconv-to-scf"
        if opts:
            p += "=" + " ".join(opts)
        return ["--spconv-decompose", p]
    if name == "to-cpu":
        opts = []
        if rng.random() < 0.3:
            opts.append("subm-search=" + rng.choice(["hash", "sorted"]))
        if rng.random() < 0.3:
            opts.append("openmp=false")
        if rng.random() < 0.2:
            opts.append("profile=true")
        if rng.random() < 0.2:
            opts.append("block-size=" + str(rng.choice([1, 3, 256])))
        if rng.random() < 0.2:
            opts.append("fuse-epilogues=false")
        p = "--spconv-to-cpu"
        if opts:
            p += "=" + " ".join(opts)
        return [p]
    if name == "to-gpu-emulator":
        opts = []
        if rng.random() < 0.3:
            opts.append("block-size=" + str(rng.choice([1, 32, 256, 1024])))
        if rng.random() < 0.2:
            opts.append("max-blocks=" + str(rng.choice([1, 3, 65535])))
        if rng.random() < 0.2:
            opts.append("profile=true")
        p = "--spconv-to-gpu-emulator"
        if opts:
            p += "=" + " ".join(opts)
        return [p]
    if name == "to-cuda":
        if not have_ptxas:
            return None
        return ["--spconv-to-cuda"]
    if name == "gpu-passes":
        return ["--spconv-decompose", "--convert-spconv-to-scf=target=gpu subm-search=hash block-size=1",
                "--one-shot-bufferize=bufferize-function-boundaries",
                "--convert-linalg-to-parallel-loops",
                "--spconv-parallel-loops-to-gpu",
                ] + rng.choice([["--spconv-gpu-kernels-to-cpu"], ["--spconv-gpu-memory"],
                                ["--spconv-gpu-runtime-calls", "--spconv-gpu-memory",
                                 "--spconv-gpu-stream-order"]])
    if name == "loop-passes":
        return [rng.choice([
            "--spconv-parallel-loops-to-gpu",
            "--spconv-parallel-loops-to-gpu=block-size=%d max-blocks=%d" % (
                rng.choice([1, 32, 1024]), rng.choice([0, 1, 65535])),
            "--spconv-gpu-kernels-to-cpu",
            "--spconv-gpu-memory",
            "--spconv-gpu-stream-order",
            "--spconv-gpu-runtime-calls",
            "--spconv-matmul-to-row-loops",
        ])]
    raise ValueError(name)


# --------------------------------------------------------------------------
# Seeds

def load_seeds(paths):
    """Every seed file split at `// -----`, comment lines dropped."""
    seeds = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            continue
        for i, chunk in enumerate(re.split(r"^// -----\s*$", text, flags=re.M)):
            lines = [l for l in chunk.split("\n") if not l.lstrip().startswith("//")]
            body = "\n".join(lines).strip() + "\n"
            if "func.func" not in body and "module" not in body and "spconv." not in body:
                continue
            rel = os.path.relpath(path, ROOT)
            # Favour the corpus and the valid inputs; expected-error cases
            # mostly mutate into more errors.
            weight = 4.0 if "/Fuzz/corpus/" in path else 1.0
            if "expected-error" in chunk:
                weight = 0.1
            seeds.append((f"{rel}#{i}", body, weight))
    return seeds


def default_seed_paths():
    paths = []
    for top in ["test/Fuzz/corpus", "examples", "test"]:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames.sort()
            for fn in sorted(filenames):
                if fn.endswith(".mlir"):
                    paths.append(os.path.join(dirpath, fn))
    # Unique, in a fixed order (the corpus first).
    seen, out = set(), []
    for p in paths:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


# --------------------------------------------------------------------------
# Mutations

INTERESTING = [0, 1, 1, 2, 2, 3, 3, 4, 5, 7, 8, 16, 31, 64, 1000, -1, -2,
               2**31 - 1, 2**31, 2**32, 2**32 + 1, 2**62, 2**63 - 1, 10**6]
SMALL = [0, 1, 1, 2, 2, 3, 3, 4, 5, 7, -1]
ELEMENT_TYPES = ["f16", "bf16", "f32", "f64", "i1", "i8", "i32", "i64", "index",
                 "f80", "f128", "tf32", "f8E4M3FN", "f8E5M2", "complex<f32>"]
SPCONV_OPS = ["conv", "inverse_conv", "pool", "build_rulebook", "rulebook_conv",
              "rulebook_pool", "rulebook_pool_grad", "rulebook_weight_grad",
              "linearize", "delinearize", "sort_unique",
              "hash_build", "hash_lookup", "gather_rows", "scatter_add_rows",
              "unfold", "fold", "segment_max", "segment_max_grad"]
KINDS = ["subm", "regular", "transposed", "inverse"]
GEOM_FIELDS = ["kernel", "stride", "padding", "dilation", "output_padding"]


def pick_int(rng, small=False):
    return rng.choice(SMALL if small else INTERESTING)


def mutate_int_list(rng, items, small):
    items = list(items)
    r = rng.random()
    if r < 0.55 and items:
        i = rng.randrange(len(items))
        items[i] = str(pick_int(rng, small))
    elif r < 0.7 and items:
        i = rng.randrange(len(items))
        items[i] = str(int(items[i]) + rng.choice([-1, 1])) if items[i].lstrip("-").isdigit() else "1"
    elif r < 0.8:
        items.insert(rng.randrange(len(items) + 1), str(pick_int(rng, True)))
    elif r < 0.9 and items:
        del items[rng.randrange(len(items))]
    else:
        v = str(pick_int(rng, small))
        items = [v] * max(1, len(items))
    return items


def sub_one(rng, pattern, text, repl, flags=0):
    """Applies repl to one random match of pattern; None if no match."""
    matches = list(re.finditer(pattern, text, flags))
    if not matches:
        return None
    m = rng.choice(matches)
    new = repl(m)
    if new is None:
        return None
    return text[:m.start()] + new + text[m.end():]


def m_geom_list(rng, text, ctx):
    def repl(m):
        items = [x.strip() for x in m.group(2).split(",") if x.strip()]
        return f"{m.group(1)} = [{', '.join(mutate_int_list(rng, items, rng.random() < 0.7))}]"
    return sub_one(rng, r"\b(kernel|stride|padding|dilation|output_padding) = \[([^\]]*)\]", text, repl)


def m_geom_field(rng, text, ctx):
    """Adds, drops or renames a geometry field."""
    r = rng.random()
    if r < 0.5:
        def repl(m):
            n = len([x for x in m.group(1).split(",") if x.strip()])
            field = rng.choice(GEOM_FIELDS[1:])
            vals = ", ".join(str(pick_int(rng, True)) for _ in range(max(1, n)))
            return m.group(0) + f", {field} = [{vals}]"
        return sub_one(rng, r"kernel = \[([^\]]*)\]", text, repl)
    if r < 0.8:
        return sub_one(rng, r", (stride|padding|dilation|output_padding) = \[[^\]]*\]", text,
                       lambda m: "")
    return sub_one(rng, r"\b(kernel|stride|padding|dilation|output_padding)( = \[)", text,
                   lambda m: rng.choice(GEOM_FIELDS) + m.group(2))


def m_geom_kind(rng, text, ctx):
    return sub_one(rng, r"<(subm|regular|transposed|inverse)\b", text,
                   lambda m: "<" + rng.choice([k for k in KINDS if k != m.group(1)]))


def m_grid(rng, text, ctx):
    r = rng.random()
    if r < 0.7:
        def repl(m):
            items = [x.strip() for x in m.group(1).split(",") if x.strip()]
            return f"#spconv.grid<[{', '.join(mutate_int_list(rng, items, False))}]"
        return sub_one(rng, r"#spconv\.grid<\[([^\]]*)\]", text, repl)
    if r < 0.85:
        return sub_one(rng, r"(#spconv\.grid<\[[^\]]*\])(, batch = -?\d+)?>", text,
                       lambda m: m.group(1) + f", batch = {pick_int(rng)}>")
    return sub_one(rng, r", batch = -?\d+", text, lambda m: "")


TENSOR_RE = r"tensor<((?:(?:\?|\d+)x)*)(f16|bf16|f32|f64|i1|i8|i32|i64|index|f80|f128|tf32|f8E4M3FN|f8E5M2)\b"


def m_tensor_dims(rng, text, ctx):
    def repl(m):
        dims = [d for d in m.group(1).split("x") if d]
        r = rng.random()
        if r < 0.6 and dims:
            i = rng.randrange(len(dims))
            dims[i] = rng.choice(["?", str(pick_int(rng, True)), str(pick_int(rng))]) \
                if dims[i] != "?" else str(pick_int(rng, True))
            dims = [d if not d.startswith("-") else "?" for d in dims]
        elif r < 0.8:
            dims.insert(rng.randrange(len(dims) + 1), rng.choice(["?", "1", "2", "3", "27"]))
        elif r < 0.95 and dims:
            del dims[rng.randrange(len(dims))]
        else:
            dims = ["*"]
        return "tensor<" + "".join(d + "x" for d in dims) + m.group(2)
    return sub_one(rng, TENSOR_RE, text, repl)


def m_tensor_dims_consistent(rng, text, ctx):
    """Changes one dimension value everywhere (channel counts, kernel volumes)."""
    nums = sorted(set(re.findall(r"(?<=[<x])(\d+)(?=x)", text)))
    if not nums:
        return None
    old = rng.choice(nums)
    new = str(rng.choice([1, 2, 3, 5, 8, 9, 27, 0]))
    return re.sub(r"(?<=[<x])" + old + r"(?=x)", new, text)


def m_element_type(rng, text, ctx):
    if rng.random() < 0.5:
        # Everywhere: keeps the types consistent, changes the element type.
        types = sorted(set(re.findall(r"x(f16|bf16|f32|f64)\b", text)))
        if not types:
            return None
        old = rng.choice(types)
        return re.sub(r"x" + old + r"\b", "x" + rng.choice(ELEMENT_TYPES), text)
    return sub_one(rng, TENSOR_RE, text,
                   lambda m: "tensor<" + m.group(1) + rng.choice(ELEMENT_TYPES))


def m_op_name(rng, text, ctx):
    r = rng.random()
    if r < 0.6:
        return sub_one(rng, r"\bspconv\.(" + "|".join(SPCONV_OPS) + r")\b", text,
                       lambda m: "spconv." + rng.choice(SPCONV_OPS))
    if r < 0.8:
        return sub_one(rng, r"\b(spconv\.(?:rulebook_)?pool) (max|avg)\b", text,
                       lambda m: m.group(1) + " " + rng.choice(["max", "avg", "sum", ""]))
    if rng.random() < 0.5:
        return sub_one(rng, r"spconv\.rulebook_conv inverse ", text, lambda m: "spconv.rulebook_conv ")
    return sub_one(rng, r"spconv\.rulebook_conv %", text, lambda m: "spconv.rulebook_conv inverse %")


def m_bias(rng, text, ctx):
    if rng.random() < 0.5:
        return sub_one(rng, r" bias %[\w#]+", text, lambda m: "")
    names = ctx["defs"]
    if not names:
        return None
    return sub_one(rng, r"(spconv\.(?:conv|inverse_conv|rulebook_conv)\b[^:\n]*?)(%[\w#]+)(\s*(?:\n\s*)?:)",
                   text, lambda m: m.group(1) + m.group(2) + " bias " + rng.choice(names) + m.group(3))


SSA_USE_RE = r"(?<![\w])%[A-Za-z_][\w$.]*(?:#\d+)?(?![\w:]*\s*[:=])"


def collect_defs(text):
    defs = []
    for m in re.finditer(r"^\s*((?:%[\w$.]+(?::\d+)?\s*,\s*)*%[\w$.]+(?::(\d+))?)\s*=", text, re.M):
        for part in m.group(1).split(","):
            part = part.strip()
            if ":" in part:
                name, n = part.split(":")
                defs += [f"{name}#{k}" for k in range(int(n))]
            else:
                defs.append(part)
    for m in re.finditer(r"(%[\w$.]+)\s*:\s*(?=[!\w])", text):
        defs.append(m.group(1))
    return sorted(set(defs))


def m_swap_ssa(rng, text, ctx):
    names = ctx["defs"]
    if len(names) < 2:
        return None
    return sub_one(rng, SSA_USE_RE, text, lambda m: rng.choice([n for n in names if n != m.group(0)] or names))


def m_drop_dup_operand(rng, text, ctx):
    r = rng.random()
    if r < 0.4:
        return sub_one(rng, r"(%[\w#]+), (?=%)", text, lambda m: "")
    if r < 0.7:
        return sub_one(rng, r"(?<=%[\w#]), (%[\w#]+)", text, lambda m: "")
    return sub_one(rng, SSA_USE_RE, text, lambda m: m.group(0) + ", " + m.group(0))


def m_type_list(rng, text, ctx):
    """Drops or duplicates one type in a `: T, T -> T` list."""
    def repl(m):
        parts = [p for p in re.split(r",\s+(?=[!t])", m.group(2))]
        if rng.random() < 0.5 and len(parts) > 1:
            del parts[rng.randrange(len(parts))]
        else:
            i = rng.randrange(len(parts))
            parts.insert(i, parts[i])
        return m.group(1) + ", ".join(parts)
    return sub_one(rng, r"(-> |: )((?:(?:tensor<[^<>]*(?:<[^<>]*(?:<[^<>]*>)?[^<>]*>)?[^<>]*>|![\w.]+(?:<[^\n]*?>>)?)(?:,\s+)?)+)",
                   text, repl)


def m_lines(rng, text, ctx):
    lines = text.split("\n")
    body = [i for i, l in enumerate(lines) if l.strip() and not l.strip().startswith("func.func")
            and l.strip() not in ("}", "{")]
    if not body:
        return None
    i = rng.choice(body)
    r = rng.random()
    if r < 0.5:
        del lines[i]
    elif r < 0.75:
        lines.insert(i, lines[i])
    else:
        j = rng.choice(body)
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def m_int_literal(rng, text, ctx):
    return sub_one(rng, r"(?<=arith\.constant )-?\d+(?= : )", text, lambda m: str(pick_int(rng)))


def value_types(text):
    """SSA name -> type text, for single-result defs and function arguments."""
    types = {}
    for m in re.finditer(r"(%[\w$.]+)\s*:\s*((?:tensor|memref)<[^<>]*(?:<[^<>]*(?:<[^<>]*>)?[^<>]*>)?[^<>]*>"
                         r"|!spconv\.rulebook<#spconv\.geom<[^<>]*>, #spconv\.grid<[^<>]*>>|!spconv\.hash_table"
                         r"|![\w]+|i1|index|i32|i64|f32)", text):
        types.setdefault(m.group(1), m.group(2))
    aliases = dict(re.findall(r"^(![\w]+) = (.*)$", text, re.M))
    for m in re.finditer(r"^\s*(%[\w$.]+)(?:, (%[\w$.]+))?(?:, (%[\w$.]+))? = [\s\S]*?->\s*(.*)$", text, re.M):
        results = [g for g in m.groups()[:3] if g]
        tys = re.split(r",\s+(?=[!t])", m.group(4).strip())
        if len(tys) == len(results):
            for n, t in zip(results, tys):
                types.setdefault(n, t.strip())
    return {n: aliases.get(t, t) for n, t in types.items()}


def m_wrap_select(rng, text, ctx):
    """Routes a value through arith.select or scf.if on a new i1 argument."""
    types = value_types(text)
    cands = [n for n in sorted(types) if not ctx["skip_rulebook_select"]
             or "rulebook" not in types[n]]
    if not cands:
        return None
    name = rng.choice(cands)
    ty = types[name]
    uses = []
    for m in re.finditer(re.escape(name) + r"(?![\w$.#])", text):
        if re.match(r"\s*:", text[m.end():]):
            continue  # a function argument or block argument
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = text[line_start:m.start()]
        if re.match(r"\s*(%[\w$.:#]+\s*,\s*)*$", before) and re.match(r"\s*(,\s*%[\w$.:#]+\s*)*=", text[m.end():]):
            continue  # a definition
        uses.append(m)
    if not uses:
        return None
    use = rng.choice(uses)
    line_start = text.rfind("\n", 0, use.start()) + 1
    indent = re.match(r"[ \t]*", text[line_start:]).group(0)
    func = text.rfind("func.func @", 0, use.start())
    if func < 0:
        return None
    paren = text.find("(", func)
    if paren < 0:
        return None
    k = rng.randrange(1000)
    cond = f"%fzc{k}"
    sel = f"%fzs{k}"
    if rng.random() < 0.5:
        stmt = f"{indent}{sel} = arith.select {cond}, {name}, {name} : {ty}\n"
    else:
        stmt = (f"{indent}{sel} = scf.if {cond} -> ({ty}) {{\n{indent}  scf.yield {name} : {ty}\n"
                f"{indent}}} else {{\n{indent}  scf.yield {name} : {ty}\n{indent}}}\n")
    # Find the start of the statement containing the use.
    stmt_start = line_start
    while True:
        line = text[stmt_start:text.find("\n", stmt_start) if text.find("\n", stmt_start) >= 0 else len(text)]
        if re.match(r"\s*(%[\w$.:#, ]+=|return|func\.return|scf\.yield|\"?[\w]+\.[\w]+)", line) or stmt_start == 0:
            break
        stmt_start = text.rfind("\n", 0, stmt_start - 1) + 1
    if stmt_start <= paren:
        return None
    new = text[:use.start()] + sel + text[use.end():]
    new = new[:stmt_start] + stmt + new[stmt_start:]
    sep = "" if text[paren + 1] == ")" else ", "
    return new[:paren + 1] + f"{cond}: i1" + sep + new[paren + 1:]


def line_of(err):
    m = re.search(r"<stdin>:(\d+):\d+: error: (.*)", err)
    return (int(m.group(1)) - 1, m.group(2)) if m else (None, None)


def repair(rng, text, err):
    """Edits text the way the verifier's first error asks (None: no rule).

    Mutants mostly fail to verify; following the error's own numbers (the
    grid the geometry computes, the kernel volume, the type of a prior use)
    turns more of them into valid inputs that reach the passes."""
    line, msg = line_of(err)
    if msg is None:
        return None
    lines = text.split("\n")
    if not 0 <= line < len(lines):
        return None

    # Never the element type of a dense array (`array<i32: ...>`): MLIR 22's
    # parser crashes on `array<index: ...>` before any spconv code runs (the
    # reason operandSegmentSizes is never mutated).
    def outside_arrays(old):
        return re.compile(r"(?<!array<)" + re.escape(old))

    def on_statement(old, new):
        pattern = outside_arrays(old)
        for i in range(line, min(line + 4, len(lines))):
            if pattern.search(lines[i]):
                lines[i] = pattern.sub(lambda _: new, lines[i], count=1)
                return "\n".join(lines)
        return None

    m = re.search(r"expects different type than prior uses: '(.*)' vs '(.*)'$", msg)
    if m:
        if rng.random() < 0.5:
            return on_statement(m.group(1), m.group(2))
        return outside_arrays(m.group(2)).sub(lambda _: m.group(1), text)
    m = re.search(r"grid (\[[\d, ]*\]) disagrees with the grid (\[[\d, ]*\])", msg)
    if m:
        return on_statement("grid<" + m.group(1), "grid<" + m.group(2)) or \
            text.replace("grid<" + m.group(1), "grid<" + m.group(2))
    m = re.search(r"grid (#spconv\.grid<.*?>) differs from the rulebook's output grid (#spconv\.grid<.*?>)$", msg)
    if m:
        return on_statement(m.group(1), m.group(2)) or text.replace(m.group(1), m.group(2))
    m = re.search(r"weight has (\d+) kernel offsets but the kernel \[[\d, ]*\] has (\d+)", msg)
    if m:
        return on_statement(f"tensor<{m.group(1)}x", f"tensor<{m.group(2)}x")
    m = re.search(r"\('([^']*)'\) doesn't match function result type \('([^']*)'\)", msg)
    if m:
        return text.replace(m.group(2), m.group(1))
    m = re.search(r"\((\d+)\) and [\w ]+ \((\d+)\) must agree", msg)
    if m:
        return on_statement(f"{m.group(1)}x", f"{m.group(2)}x") or on_statement(f"x{m.group(1)}x", f"x{m.group(2)}x")
    return None


def m_generic_attr(rng, text, ctx):
    """Properties of the generic form: integer values, attribute kinds, dropped entries."""
    r = rng.random()
    if r < 0.35:
        # Not `workgroup_attributions`: upstream's GPUFuncOp::verifyBody (MLIR 22)
        # indexes the block arguments with it unchecked and crashes on a negative
        # count, before any of our code runs (the same reason operandSegmentSizes is
        # not mutated).
        return sub_one(rng, r"((?!workgroup_attributions)\b\w+ = )-?\d+( : i(?:32|64))", text,
                       lambda m: m.group(1) + str(pick_int(rng, True)) + m.group(2))
    if r < 0.7:
        return sub_one(rng, r"(geometry = )#spconv\.geom<[^<>]*>", text,
                       lambda m: m.group(1) + rng.choice(["1 : i64", "#spconv.grid<[8]>", "unit",
                                                          "\"subm\"", "[3, 3]"]))
    if r < 0.85:
        return sub_one(rng, r"<\{inverse\}> ", text, lambda m: "")
    return sub_one(rng, r", (kind|geometry) = [^,}]*(?=\}>)", text, lambda m: "")


MUTATORS = [
    (m_geom_list, 6), (m_geom_field, 2), (m_geom_kind, 2), (m_grid, 4),
    (m_tensor_dims, 5), (m_tensor_dims_consistent, 2), (m_element_type, 2),
    (m_op_name, 2), (m_bias, 1), (m_swap_ssa, 3), (m_drop_dup_operand, 2),
    (m_type_list, 1), (m_lines, 2), (m_int_literal, 1), (m_wrap_select, 2),
    (m_generic_attr, 1),
]


def kernel_volume(text):
    vol = 0
    for m in re.finditer(r"\bkernel = \[([^\]]*)\]", text):
        v = 1
        for x in m.group(1).split(","):
            x = x.strip()
            try:
                v *= max(1, int(x))
            except ValueError:
                pass
        vol = max(vol, v)
    return vol


def make_input(seeds, args, index, to_generic=None):
    """The mutant and pipeline of run `index`: a function of (seed, index) only.

    A quarter of the seeds are first printed in the generic form (to_generic),
    whose mutants reach the verifiers without the custom parsers' checks."""
    rng = random.Random(f"{args.seed}:{index}")
    name, text, _w = rng.choices(seeds, [w for _n, _t, w in seeds])[0]
    if rng.random() < 0.25 and to_generic:
        generic = to_generic(name, text)
        if generic:
            name, text = name + " (generic)", generic
    ctx = {"skip_rulebook_select": args.skip_rulebook_select}
    applied = []
    for _attempt in range(20):
        cur, applied = text, []
        n = rng.choice([0, 1, 1, 1, 1, 1, 2, 2, 3, 5])
        for _ in range(n):
            ctx["defs"] = collect_defs(cur)
            fn = rng.choices([f for f, _ in MUTATORS], [w for _, w in MUTATORS])[0]
            new = fn(rng, cur, ctx)
            if new is not None and new != cur:
                cur = new
                applied.append(fn.__name__[2:])
        if args.max_kernel_volume and kernel_volume(cur) > args.max_kernel_volume:
            continue
        break
    else:
        cur, applied = text, []
    pipeline = PIPELINES[rng.randrange(len(PIPELINES))]
    return name, applied, cur, pipeline, rng


# --------------------------------------------------------------------------
# Running spconv-opt

CRASH_MARKERS = ["PLEASE submit a bug report", "LLVM ERROR", "Assertion", "UNREACHABLE",
                 "Stack dump", "terminate called", "Segmentation fault", "AddressSanitizer",
                 "core dumped"]
OOM_MARKERS = ["out of memory", "std::bad_alloc", "Cannot allocate memory"]


class Result:
    def __init__(self, rc, out, err, timed_out, seconds):
        self.rc, self.out, self.err, self.timed_out, self.seconds = rc, out, err, timed_out, seconds


def run_tool(cmd, stdin_text, timeout, mem_mb):
    def limit():
        if mem_mb:
            b = mem_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (b, b))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.setsid()
    t0 = time.monotonic()
    for attempt in range(10):
        try:
            p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, preexec_fn=limit)
            break
        except OSError:
            # spconv-opt being relinked under a long run: wait for it.
            if attempt == 9:
                raise
            time.sleep(5)
    try:
        out, err = p.communicate(stdin_text.encode(), timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        timed_out = True
    return Result(p.returncode, out.decode(errors="replace"), err.decode(errors="replace"),
                  timed_out, time.monotonic() - t0)


def classify(res):
    """None if the run is fine (success or a proper diagnostic), else a kind."""
    if res.timed_out:
        return "hang"
    if any(m in res.err for m in OOM_MARKERS):
        return "oom"
    if res.rc < 0 or any(m in res.err for m in CRASH_MARKERS):
        return "crash"
    if res.rc != 0 and "error:" not in res.err:
        return "silent-failure"
    return None


def signature(kind, pipeline, err):
    """What makes two findings the same bug: kind, pipeline, the first telling line."""
    key = ""
    for line in err.split("\n"):
        if any(m in line for m in ["LLVM ERROR", "Assertion", "UNREACHABLE", "terminate called"]):
            key = line
            break
    if not key:
        # The innermost frame of our own code (spconv-opt's symbols), else
        # the innermost named frame.
        frames = []
        for l in err.split("\n"):
            m = re.match(r"\s*#\d+ 0x[0-9a-f]+ (.*?)(?:\(([^()]*)\+0x[0-9a-f]+\))?$", l)
            if not m or not m.group(1).strip() or "llvm::sys::" in l:
                continue
            func = re.sub(r"\(.*$", "", m.group(1)).strip()
            frames.append((func, "spconv-opt" in (m.group(2) or "") or ".cpp:" in l or "spconv" in func))
        ours = [f for f, own in frames if own]
        key = ours[0] if ours else (frames[0][0] if frames else "")
    if not key:
        errs = [l for l in err.split("\n") if "error:" in l]
        key = errs[0].split("error:", 1)[1] if errs else ""
    key = re.sub(r"\d+", "N", key).strip()
    # The pass that crashed: what the minimiser keeps (a memory error's top
    # frame can change from run to run, its pass does not).
    m = re.search(r"([\w:]*Pass)(?:<[^>]*>)?::runOnOperation", err)
    pass_name = m.group(1).split("::")[-1] if m else ""
    return f"{kind}|{pipeline}|{pass_name}|{key}"


def same_failure(sig_a, sig_b):
    """Kind, pipeline and pass agree (and the message too where there is no pass)."""
    a, b = sig_a.split("|"), sig_b.split("|")
    return a[:3] == b[:3] and (a[2] != "" or a[3] == b[3])


class Runner:
    def __init__(self, args):
        self.args = args
        self.opt = args.spconv_opt
        self.generic_cache = {}
        self.generic_lock = threading.Lock()

    def generic(self, name, text):
        """The seed in the generic form, without locations (None if it does not verify)."""
        with self.generic_lock:
            if name in self.generic_cache:
                return self.generic_cache[name]
        res = run_tool([self.opt, "-", "--mlir-print-op-generic"], text, 60, self.args.mem_limit)
        out = res.out if res.rc == 0 else None
        with self.generic_lock:
            self.generic_cache[name] = out
        return out

    def check(self, text, pipe_args, pipeline):
        """Runs one input through one pipeline: (kind, cmd, result) or (None, cmd, result).

        kind "rejected" means the input does not verify (not a finding)."""
        a = self.args
        parse_cmd = [self.opt, "-"]
        res = run_tool(parse_cmd, text, a.timeout, a.mem_limit)
        kind = classify(res)
        if kind:
            return kind, parse_cmd, res
        if res.rc != 0:
            return "rejected", parse_cmd, res
        if pipeline == "parse":
            # The printed form and the generic form of a verified input
            # reparse, verify and print the same again.
            for first in ([self.opt, "-"], [self.opt, "-", "--mlir-print-op-generic"]):
                res1 = run_tool(first, text, a.timeout, a.mem_limit)
                res2 = run_tool([self.opt, "-"], res1.out, a.timeout, a.mem_limit)
                kind = classify(res1) or classify(res2)
                if kind or res1.rc != 0 or res2.rc != 0:
                    return kind or "bad-output", first + ["|", self.opt, "-"], res2
                if res2.out != res.out:
                    res2.err += "\nerror: printing again changes the output:\n" + res.out + "\n---\n" + res2.out
                    return "bad-output", first + ["|", self.opt, "-"], res2
            return None, parse_cmd, res
        cmd = [self.opt, "-"] + pipe_args
        res = run_tool(cmd, text, a.timeout, a.mem_limit)
        kind = classify(res)
        if kind:
            return kind, cmd, res
        if res.rc != 0:
            # Refused with a diagnostic. Does it go through without
            # verification after every pass? Then a pass broke the IR.
            res2 = run_tool(cmd + ["--verify-each=false"], text, a.timeout, a.mem_limit)
            kind2 = classify(res2)
            if kind2:
                return kind2, cmd + ["--verify-each=false"], res2
            if res2.rc == 0:
                return "invalid-ir", cmd, res
            return None, cmd, res
        # The output parses and verifies again.
        res3 = run_tool([self.opt, "-"], res.out, a.timeout, a.mem_limit)
        kind = classify(res3)
        if kind or res3.rc != 0:
            return kind or "bad-output", cmd + ["|", self.opt, "-"], res3
        return None, cmd, res


STATEMENT_START = re.compile(r"\s*(%|\}|func\.func|return\b|module\b|\"|![\w.]+ =|\^|[a-z_]+\.[a-z_]+|\{|$)")


def statements(text):
    """Groups lines into statements (an op's continuation lines go with it)."""
    units = []
    for line in text.split("\n"):
        if units and not STATEMENT_START.match(line):
            units[-1] += "\n" + line
        else:
            units.append(line)
    return units


def drop_results(text):
    """Functions return nothing, so the statements behind their results can go."""
    text = re.sub(r"(func\.func @[^{]*?\))\s*->\s*(?:\([^{]*?\)|[^{]*?)\s*\{", r"\1 {", text)
    return re.sub(r"\breturn\b[^\n]*(\n\s+[:,][^\n]*)*", "return", text)


def minimise(runner, text, pipe_args, pipeline, want_sig, budget_s):
    """Deletes statements (chunks, then one by one) while the same failure remains."""
    deadline = time.monotonic() + budget_s

    def same(cand):
        if time.monotonic() > deadline:
            return False
        kind, _cmd, res = runner.check(cand, pipe_args, pipeline)
        return kind not in (None, "rejected") and same_failure(signature(kind, pipeline, res.err), want_sig)

    cand = drop_results(text)
    if cand != text and same(cand):
        text = cand
    units = statements(text)
    chunk = max(1, len(units) // 2)
    while chunk >= 1 and time.monotonic() < deadline:
        i, changed = 0, False
        while i < len(units) and time.monotonic() < deadline:
            cand = units[:i] + units[i + chunk:]
            if cand and same("\n".join(cand)):
                units, changed = cand, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return "\n".join(units)


def write_finding(args, rec, text):
    """OUT/KIND-PIPELINE-HASH/: input.mlir, original.mlir, command.txt, stderr.txt, info.json."""
    h = hashlib.sha1(rec["signature"].encode()).hexdigest()[:8]
    d = os.path.join(args.out, f"{rec['kind']}-{rec['pipeline']}-{h}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "input.mlir"), "w") as f:
        f.write(text if text.endswith("\n") else text + "\n")
    with open(os.path.join(d, "original.mlir"), "w") as f:
        f.write(rec["input"])
    parts = ["spconv-opt" if c == args.spconv_opt else c for c in rec["command"]]
    parts[parts.index("-")] = "input.mlir"
    cmd = shlex.join(parts).replace("'|'", "|")
    with open(os.path.join(d, "command.txt"), "w") as f:
        f.write(cmd + "\n")
    with open(os.path.join(d, "stderr.txt"), "w") as f:
        f.write(rec["stderr"])
    info = {k: rec[k] for k in ["index", "seed", "seed_file", "mutations", "pipeline", "kind",
                                 "signature", "count"]}
    info["reproduce"] = (f"test/Fuzz/fuzz.py --seed {rec['seed']} --start {rec['index']} --runs 1"
                         + (f" --max-kernel-volume {args.max_kernel_volume}" if args.max_kernel_volume else "")
                         + (" --skip-rulebook-select" if args.skip_rulebook_select else "")
                         + (f" --pipelines {args.pipelines}" if args.pipelines else ""))
    with open(os.path.join(d, "info.json"), "w") as f:
        json.dump(info, f, indent=1)
    return d, cmd


def prepare(runner, seeds, args, index, have_ptxas):
    """Run index's input (mutated, then partly repaired) and pipeline.

    Returns (seed name, mutations, text, pipeline, its arguments, and the
    kind, command and result of a repair attempt that crashed or None)."""
    name, applied, text, pipeline, rng = make_input(seeds, args, index, runner.generic)
    pargs = pipeline_args(pipeline, rng, have_ptxas)
    if pargs is None:
        pipeline, pargs = "to-cpu", ["--spconv-to-cpu"]
    kind = cmd = res = None
    if applied and rng.random() < 0.8:
        # Verifier-guided repair; each attempt also fuzzes the parser and verifier.
        for _ in range(6):
            cmd = [runner.opt, "-"]
            res = run_tool(cmd, text, args.timeout, args.mem_limit)
            kind = classify(res)
            if kind or res.rc == 0:
                break
            fixed = repair(rng, text, res.err)
            if fixed is None or fixed == text:
                break
            text = fixed
            applied = applied + ["repair"]
    return name, applied, text, pipeline, pargs, kind, cmd, res


# --------------------------------------------------------------------------

def main():
    global PIPELINES
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spconv-opt", default=os.path.join(ROOT, "build", "bin", "spconv-opt"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=0, help="inputs to run (0: until --time)")
    ap.add_argument("--time", type=float, default=0, help="seconds to run (0: until --runs)")
    ap.add_argument("--start", type=int, default=0, help="first run index (to resume a long run)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10, help="per-input time limit (s): a hang beyond it")
    ap.add_argument("--mem-limit", type=int, default=4096, help="per-process address space (MiB)")
    ap.add_argument("--out", default="fuzz-findings")
    ap.add_argument("--corpus", nargs="*", help="seed files (default: corpus, examples, tests)")
    ap.add_argument("--pipelines", default="", help="comma-separated subset of: " + ",".join(PIPELINES))
    ap.add_argument("--minimise-time", type=float, default=120, help="seconds per finding (0: off)")
    # Switches that keep the CI slice off crash classes being fixed (issue 11).
    # Remove them from scripts/test.sh once those fixes land.
    ap.add_argument("--max-kernel-volume", type=int, default=0,
                    help="skip mutants with a kernel volume above this (0: no limit)")
    ap.add_argument("--skip-rulebook-select", action="store_true",
                    help="never route a !spconv.rulebook through arith.select / scf.if")
    ap.add_argument("--check-corpus", action="store_true",
                    help="only check that every file of test/Fuzz/corpus verifies")
    ap.add_argument("--show", type=int, default=None, help="print the mutant of run N and exit")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()

    if args.check_corpus:
        if not os.access(args.spconv_opt, os.X_OK):
            sys.exit(f"fuzz.py: no spconv-opt at {args.spconv_opt} (--spconv-opt)")
        bad = 0
        corpus = os.path.join(HERE, "corpus")
        for fn in sorted(os.listdir(corpus)):
            with open(os.path.join(corpus, fn)) as f:
                res = run_tool([args.spconv_opt, "-"], f.read(), 60, args.mem_limit)
            status = "ok" if res.rc == 0 else "FAILED"
            bad += res.rc != 0
            print(f"{status}: {fn}")
            if res.rc:
                print(res.err)
        sys.exit(1 if bad else 0)

    seeds = load_seeds(args.corpus if args.corpus else default_seed_paths())
    if not seeds:
        sys.exit("fuzz.py: no seeds")
    if args.pipelines:
        wanted = args.pipelines.split(",")
        for p in wanted:
            if p not in PIPELINES:
                sys.exit(f"fuzz.py: unknown pipeline {p}")
        PIPELINES = wanted
    have_ptxas = bool(shutil.which("ptxas") or os.access("/usr/local/cuda/bin/ptxas", os.X_OK))
    if not shutil.which("ptxas") and have_ptxas:
        os.environ["PATH"] += os.pathsep + "/usr/local/cuda/bin"

    if args.show is not None:
        # Without spconv-opt, the mutant before repair.
        runner = Runner(args)
        if not os.access(args.spconv_opt, os.X_OK):
            runner.opt = None
            name, applied, text, pipeline, rng = make_input(seeds, args, args.show)
            pargs = pipeline_args(pipeline, rng, have_ptxas)
        else:
            name, applied, text, pipeline, pargs, *_ = prepare(runner, seeds, args, args.show, have_ptxas)
        try:
            print(f"// seed {name}, mutations {applied}, pipeline {pipeline}: {shlex.join(pargs)}")
            print(text)
        except BrokenPipeError:
            pass
        return 0

    if not os.access(args.spconv_opt, os.X_OK):
        sys.exit(f"fuzz.py: no spconv-opt at {args.spconv_opt} (--spconv-opt)")
    if not args.runs and not args.time:
        args.runs = 1000
    runner = Runner(args)
    start = time.monotonic()
    lock = threading.Lock()
    stats = {p: {"ran": 0, "rejected": 0, "refused": 0, "ok": 0, "findings": 0} for p in PIPELINES}
    findings = {}   # signature -> (index, record)
    next_index = [args.start]
    stop = [False]

    def budget_left():
        if args.time and time.monotonic() - start > args.time:
            return False
        return True

    def take():
        with lock:
            if stop[0] or not budget_left():
                return None
            if args.runs and next_index[0] >= args.start + args.runs:
                return None
            i = next_index[0]
            next_index[0] += 1
            return i

    def one(index):
        name, applied, text, pipeline, pargs, kind, cmd, res = prepare(runner, seeds, args, index, have_ptxas)
        if kind:
            pipeline = "parse"
        else:
            kind, cmd, res = runner.check(text, pargs, pipeline)
        rec = None
        if kind not in (None, "rejected"):
            sig = signature(kind, pipeline, res.err)
            rec = {"index": index, "seed": args.seed, "seed_file": name, "mutations": applied,
                   "pipeline": pipeline, "kind": kind, "signature": sig,
                   "command": cmd, "stderr": res.err[-20000:], "input": text,
                   "pipe_args": pargs}
        with lock:
            s = stats.setdefault(pipeline, {"ran": 0, "rejected": 0, "refused": 0, "ok": 0, "findings": 0})
            s["ran"] += 1
            if kind == "rejected":
                s["rejected"] += 1
            elif kind is None:
                s["ok" if res.rc == 0 else "refused"] += 1
            else:
                s["findings"] += 1
        return rec

    def worker():
        while True:
            i = take()
            if i is None:
                return
            rec = one(i)
            if rec:
                with lock:
                    old = findings.get(rec["signature"])
                    if old is None or rec["index"] < old["index"]:
                        rec["count"] = (old or {}).get("count", 0) + 1
                        findings[rec["signature"]] = rec
                        # Unminimised for now: kept if the run is interrupted.
                        write_finding(args, rec, rec["input"])
                    else:
                        old["count"] = old.get("count", 1) + 1
                if not args.quiet:
                    print(f"finding: run {rec['index']} {rec['kind']} in {rec['pipeline']} "
                          f"({rec['signature']})", flush=True)

    threads = [threading.Thread(target=worker) for _ in range(max(1, args.jobs))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except KeyboardInterrupt:
        stop[0] = True
        for t in threads:
            t.join()
    elapsed = time.monotonic() - start

    # Findings, in run order, minimised (outside the time budget).
    for sig, rec in sorted(findings.items(), key=lambda kv: kv[1]["index"]):
        text = rec["input"]
        if args.minimise_time > 0 and rec["kind"] not in ("hang", "oom"):
            text = minimise(runner, text, rec["pipe_args"], rec["pipeline"], sig, args.minimise_time)
        d, cmd = write_finding(args, rec, text)
        print(f"FINDING {rec['kind']} in {rec['pipeline']} (run {rec['index']}, seen {rec['count']}x): {d}")
        print(f"  {cmd}")
        print(f"  {sig}")

    total = sum(s["ran"] for s in stats.values())
    per = ", ".join(f"{p} {s['ran']} ({s['ok']} through)" for p, s in stats.items())
    rejected = sum(s["rejected"] for s in stats.values())
    refused = sum(s["refused"] for s in stats.values())
    print(f"fuzz: seed {args.seed}, runs {args.start}..{args.start + total - 1}, {total} inputs in "
          f"{elapsed:.0f} s ({len(seeds)} seeds; {rejected} rejected by the verifier, "
          f"{refused} refused by a pass); per pipeline: {per}; "
          f"{len(findings)} distinct finding(s)" + (f" in {args.out}" if findings else ""))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())

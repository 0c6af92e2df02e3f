"""Phase `probes`: questions for the device that the compiler's next forms
depend on and only the chip can answer (tools/gpu-kit/probes/). Today one:
`wgmma-layouts` (issue 37's sm_90a form) runs wgmma.mma_async over each
candidate shared-memory layout and says which reading of the matrix
descriptor the chip follows. A family of layouts none of whose readings
matched is a failed check: the ISA was misread. Each candidate runs in a
process of its own, since a fault loses the process's CUDA context and
would hide every later candidate (the first H200 run lost eight of ten
that way); a candidate that printed no result is reported as not run.
Without a Hopper device, or in a stand-in run, the phase notes that it did
not ask."""
import os
import re
import subprocess

CANDIDATE = re.compile(r"^candidate (?P<index>\d+) (?P<family>.+) \[(?P<reading>[^\]]+)\]$")
LINE = re.compile(r"^layout (?P<family>.+) \[(?P<reading>[^\]]+)\]: (?P<result>\w+)(?P<rest>.*)$")


def parse(text):
    """{family: {reading: "match" | "mismatch ..." | "error ..."}} from the
    probe's output."""
    families = {}
    for line in text.splitlines():
        m = LINE.match(line.strip())
        if m:
            families.setdefault(m["family"], {})[m["reading"]] = (m["result"] + m["rest"]).strip()
    return families


def candidates(text):
    """[(index, family, reading)] from the probe's `--list`."""
    found = []
    for line in text.splitlines():
        m = CANDIDATE.match(line.strip())
        if m:
            found.append((int(m["index"]), m["family"], m["reading"]))
    return found


def collect(listed, outputs):
    """{family: {reading: result}} over every listed candidate, from each
    candidate's (exit status, output): a candidate whose output has no
    result line is `not run` with its exit status and last line."""
    families = {}
    for index, family, reading in listed:
        status, text = outputs[index]
        result = parse(text).get(family, {}).get(reading)
        if result is None:
            lines = text.strip().splitlines()
            result = "not run (exit %d%s)" % (status, ": " + lines[-1] if lines else "")
        families.setdefault(family, {})[reading] = result
    return families


def judge(ctx, families):
    """One check per family: passes when exactly one reading matched."""
    for family, readings in sorted(families.items()):
        matched = [r for r, result in readings.items() if result == "match"]
        name = "wgmma layout " + family
        if len(matched) == 1:
            ctx.checks.ok("%s (%s)" % (name, matched[0]))
        else:
            ctx.checks.fail(name, "%d readings matched: %s" % (
                len(matched), "; ".join("%s: %s" % kv for kv in sorted(readings.items()))))


def run(ctx):
    probes = ctx.kit.get("probes", [])
    if "wgmma-layouts" not in probes:
        ctx.checks.notes.append("the kit has no wgmma-layouts probe (built where nvcc and "
                                "sm_90 are there)")
        return
    if ctx.mode != "cuda":
        ctx.checks.notes.append("wgmma-layouts needs a Hopper device: not run")
        return
    binary = os.path.join(ctx.root, "probes", "wgmma-layouts")
    listing = subprocess.run([binary, "--list"], capture_output=True, text=True, timeout=10)
    listed = candidates(listing.stdout)
    if listing.returncode != 0 or not listed:
        ctx.checks.fail("wgmma-layouts", "--list: exit %d: %s" % (
            listing.returncode, (listing.stdout + listing.stderr)[-2000:]))
        return
    outputs, log = {}, []
    for index, _, _ in listed:
        result = subprocess.run([binary, "--only", str(index)], capture_output=True,
                                text=True, timeout=max(10, ctx.budget_left()))
        log.append(result.stdout + result.stderr)
        if result.returncode == 2:
            ctx.write_output("wgmma-layouts.txt", "".join(log))
            ctx.checks.notes.append("wgmma-layouts: " + result.stdout.strip().splitlines()[-1])
            return
        outputs[index] = (result.returncode, result.stdout + result.stderr)
    ctx.write_output("wgmma-layouts.txt", "".join(log))
    families = collect(listed, outputs)
    ctx.data["wgmma_layouts"] = families
    judge(ctx, families)

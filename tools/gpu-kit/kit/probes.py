"""Phase `probes`: questions for the device that the compiler's next forms
depend on and only the chip can answer (tools/gpu-kit/probes/). Today one:
`wgmma-layouts` (issue 37's sm_90a form) runs wgmma.mma_async over each
candidate shared-memory layout and says which reading of the matrix
descriptor the chip follows. A family of layouts none of whose readings
matched is a failed check: the ISA was misread. Without a Hopper device, or
in a stand-in run, the phase notes that it did not ask."""
import os
import re
import subprocess

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
    result = subprocess.run([binary], capture_output=True, text=True,
                            timeout=max(10, ctx.budget_left()))
    ctx.write_output("wgmma-layouts.txt", result.stdout + result.stderr)
    if result.returncode == 2:
        ctx.checks.notes.append("wgmma-layouts: " + result.stdout.strip().splitlines()[-1])
        return
    if result.returncode != 0:
        ctx.checks.fail("wgmma-layouts", "exit %d: %s" % (result.returncode,
                                                          (result.stdout + result.stderr)[-2000:]))
        return
    families = parse(result.stdout)
    ctx.data["wgmma_layouts"] = families
    judge(ctx, families)

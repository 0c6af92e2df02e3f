"""Phase `graph`: capture one SECOND call in a CUDA graph on the compiled
code's stream and replay it. A host synchronisation inside the call breaks
the capture; the runtime's error then names the call that did it."""
import ctypes
import tempfile

from .device import stderr_to
from .inputs import network_arguments

CAPTURE_RELAXED = 2  # CU_STREAM_CAPTURE_MODE_RELAXED


def run(ctx):
    if ctx.mode != "cuda":
        ctx.checks.notes.append("capture needs a device: not run")
        return
    name = "network/second"
    args = network_arguments(ctx, name, min(ctx.sites, 20000))
    library = ctx.library(name, ctx.device_target(name))
    device = ctx.device
    cuda = device.cuda
    stream = ctypes.c_void_p(device.stream)
    report = {}
    with library.staged(args) as placed:
        try:
            library.call_discarding(placed)  # warm: modules loaded, pool grown
            device.synchronize()
            device._check("cuStreamBeginCapture",
                          cuda.cuStreamBeginCapture_v2(stream, CAPTURE_RELAXED))
            library.runtime.clear_error()
            out = library.result_struct()
            descriptors = [p.descriptor for p in placed]
            # The runtime keeps only the last error; the first, the call
            # that broke the capture, is the first line it prints.
            with tempfile.TemporaryFile() as log:
                with stderr_to(log.fileno()):
                    library.function(ctypes.byref(out),
                                     *[ctypes.byref(d) for d in descriptors])
                log.seek(0)
                printed = [l for l in log.read().decode(errors="replace").splitlines()
                           if l.startswith("spconv-rt: ")]
            error = printed[0][len("spconv-rt: "):] if printed else library.runtime.last_error()
            report["runtime_errors"] = len(printed)
            graph = ctypes.c_void_p()
            status = cuda.cuStreamEndCapture(stream, ctypes.byref(graph))
            if error or status != 0:
                report["captured"] = False
                report["broken_by"] = error or "cuStreamEndCapture returned %d" % status
                ctx.checks.notes.append("capture broken: %s" % report["broken_by"][:300])
            else:
                executable = ctypes.c_void_p()
                device._check("cuGraphInstantiate", cuda.cuGraphInstantiateWithFlags(
                    ctypes.byref(executable), graph, ctypes.c_ulonglong(0)))
                device._check("cuGraphLaunch", cuda.cuGraphLaunch(executable, stream))
                device.synchronize()
                report["captured"] = True
                report["replayed"] = True
                ctx.checks.ok("graph: one SECOND call captured and replayed")
        finally:
            device.synchronize()
    ctx.data["graph"] = report

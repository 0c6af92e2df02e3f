"""torch.compile's default backend, inductor, on an OpenPCDet-style backbone
of spconv_mlir.torch ops (torch_ops.Backbone: a batch_dict, .int()
indices, nested SparseSequentials, a strided conv and its inverse,
indices[:, 1:], features.view, sum(dim=...)): one graph (fullgraph=True),
loss and gradients against eager; then scans with other numbers of
sites. torch compiles a second graph at the first new size, with the
site counts symbolic (its automatic dynamic shapes): from then on a new
size compiles nothing (our ops' fake implementations take symbolic site
counts; torch_ops.py checks dynamic=True, one graph from the start). Inductor generates and compiles C++ for the torch ops
around ours.

Run with torch 2.4 or later (build/venv-torch): lit's `torch2` feature.
"""
import torch
from torch._inductor.compile_fx import compile_fx

from report import check, finish, relative_difference as relative
from torch_ops import Backbone, backbone_inputs

graphs = []


def inductor(graph, example_inputs):
    graphs.append(graph)
    return compile_fx(graph, example_inputs)


torch.manual_seed(1)
eager = Backbone()
model = Backbone()
model.load_state_dict(eager.state_dict())
compiled = torch.compile(model, fullgraph=True, backend=inductor)

a = eager(backbone_inputs(5))
a["loss"].backward()
b = compiled(backbone_inputs(5))
b["loss"].backward()
check("inductor: one graph", len(graphs) == 1, "%d graphs" % len(graphs))
# f32: inductor fuses and reorders the torch ops' reductions (BatchNorm,
# the loss), so equal to rounding, not bit for bit.
check("inductor: loss equals eager to f32 rounding",
      relative(b["loss"], a["loss"]) < 1e-5, "%r vs %r" % (b["loss"].item(), a["loss"].item()))
worst = max(relative(q.grad, p.grad) for p, q in zip(eager.parameters(), model.parameters()))
check("inductor: gradients equal eager to f32 rounding", worst < 1e-4,
      "largest difference %.1e of the gradient's scale" % worst)

# Other scans: other numbers of sites.
compiled(backbone_inputs(6, 55))
dynamic_graphs = len(graphs)
for count, seed in ((30, 7), (70, 8)):
    # A dict each: the model adds its outputs to the one it is given.
    a = eager(backbone_inputs(seed, count))
    b = compiled(backbone_inputs(seed, count))
    check("inductor: %d sites compile nothing new" % b["voxel_coords"].shape[0],
          len(graphs) == dynamic_graphs, "%d graphs, then %d" % (dynamic_graphs, len(graphs)))
    check("inductor: their loss equals eager to f32 rounding",
          relative(b["loss"], a["loss"]) < 1e-5, "%r vs %r" % (b["loss"].item(), a["loss"].item()))
finish()

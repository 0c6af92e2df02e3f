"""spconv_mlir.torch under torch.nn.parallel.DistributedDataParallel: two
processes (gloo, CPU), each with one sample of a batch of two, train K SGD
steps; their parameters must equal those of one process training on the
whole batch, to 1e-12 in f64 (the all-reduce sums in another order). The
model has no batch statistics (torch's SyncBatchNorm needs GPU modules) and
its loss is a per-sample mean, so the two trainings are the same
mathematics. Both processes compile the model's kernels into one store at
once: the store must survive that too."""
import os
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import spconv_mlir.torch as spconv

STEPS = 3
GRID = [8, 10, 8]


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = spconv.SparseSequential(
            spconv.SubMConv3d(3, 8, 3, indice_key="subm1"), torch.nn.ReLU(),
            spconv.SparseConv3d(8, 8, 3, stride=2, padding=1, indice_key="down"),
            torch.nn.ReLU(),
            spconv.SparseInverseConv3d(8, 4, 3, indice_key="down"))

    def forward(self, x):
        y = self.body(x)
        # Per-sample means of the squared output, then their mean.
        batch = y.indices[:, 0].long()
        per_site = y.features.square().sum(dim=1)
        sums = torch.zeros(x.batch_size, dtype=per_site.dtype).index_add(0, batch, per_site)
        counts = torch.zeros(x.batch_size, dtype=per_site.dtype).index_add(
            0, batch, torch.ones_like(per_site))
        return (sums / counts).mean()


def sample(seed):
    """One scan's sites (batch index 0) and features."""
    g = torch.Generator().manual_seed(seed)
    keys = torch.randperm(8 * 10 * 8, generator=g)[:30].sort().values
    coords = torch.stack([keys // 80, keys // 8 % 10, keys % 8], 1)
    indices = torch.cat([torch.zeros(30, 1, dtype=torch.long), coords], 1).int()
    return indices, torch.randn(30, 3, generator=g, dtype=torch.float64)


def batch_of(samples):
    indices, features = [], []
    for b, (i, f) in enumerate(samples):
        i = i.clone()
        i[:, 0] = b
        indices.append(i)
        features.append(f)
    return spconv.SparseConvTensor(torch.cat(features), torch.cat(indices), GRID, len(samples))


def train(model, batches):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in batches:
        opt.zero_grad()
        model(x).backward()
        opt.step()


def worker(rank, port, out_dir):
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=2)
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(Net().double())
    train(model, [batch_of([sample(10 * step + rank)]) for step in range(STEPS)])
    if rank == 0:
        torch.save(model.module.state_dict(), os.path.join(out_dir, "ddp.pt"))
    dist.destroy_process_group()


def main():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as out_dir:
        mp.spawn(worker, args=(port, out_dir), nprocs=2, join=True)
        ddp = torch.load(os.path.join(out_dir, "ddp.pt"))
    torch.manual_seed(0)
    single = Net().double()
    initial = {k: v.clone() for k, v in single.state_dict().items()}
    train(single, [batch_of([sample(10 * step), sample(10 * step + 1)])
                   for step in range(STEPS)])
    worst = max((single.state_dict()[k] - v).abs().max().item() for k, v in ddp.items())
    moved = max((single.state_dict()[k] - v).abs().max().item() for k, v in initial.items())
    print("DDP, 2 processes, %d steps: parameters within %.1e of one process on the whole "
          "batch" % (STEPS, worst))
    print("parameters moved: %s" % (moved > 1e-6))
    sys.exit(0 if worst < 1e-12 and moved > 1e-6 else 1)


if __name__ == "__main__":
    main()

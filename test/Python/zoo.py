"""Small models of every layer spconv 2.x has, for spconv2_compare.py.
Like examples/python/models.py, the code runs on spconv.pytorch when the
import block is swapped. spconv 2.x's CPU build refuses a bias on convs
other than 1x...x1 ("cpu don't support act and bias"): those have none and
a BatchNorm shifts instead. Its SparseAvgPool needs CUDA (exec_models.py
checks ours against the reference instead), and its max pool starts from 0,
not from the first contributor, so it equals the max DESIGN.md defines only
on non-negative features: the pool here follows a ReLU, as in networks."""
# BEGIN imports
import spconv_mlir.nn as spconv
from spconv_mlir.nn import BatchNorm1d, Module, ReLU
from spconv_mlir.functional import cat
# END imports


class DownUp(Module):
    """Regular conv down, inverse conv back, skip concatenation, a
    pointwise subm conv (spconv's 1x1 path) and a residual add."""

    def __init__(self, c=8):
        super().__init__()
        self.stem = spconv.SparseSequential(
            spconv.SubMConv3d(4, c, 3, bias=False, indice_key="s0"), BatchNorm1d(c), ReLU())
        self.down = spconv.SparseSequential(
            spconv.SparseConv3d(c, 2 * c, 3, stride=2, padding=1, bias=False,
                                indice_key="d1"), BatchNorm1d(2 * c), ReLU())
        self.mid = spconv.SubMConv3d(2 * c, 2 * c, 3, dilation=2, bias=False, indice_key="s1")
        self.up = spconv.SparseInverseConv3d(2 * c, c, 3, bias=False, indice_key="d1")
        self.proj = spconv.SubMConv3d(2 * c, c, 1, bias=True)
        self.relu = ReLU()

    def forward(self, x):
        x = self.stem(x)
        u = self.up(self.mid(self.down(x)))
        y = self.proj(u.replace_feature(cat([u.features, x.features], 1)))
        return y.replace_feature(self.relu(y.features + x.features))


def transposed():
    return spconv.SparseSequential(
        spconv.SparseConvTranspose3d(4, 6, 3, stride=2, padding=1, bias=False),
        BatchNorm1d(6))


def pools():
    return spconv.SparseSequential(
        spconv.SubMConv3d(4, 8, 3, bias=False), BatchNorm1d(8), ReLU(),
        spconv.SparseMaxPool3d(3, stride=2, padding=1),
        spconv.SparseConv3d(8, 8, 1, bias=False))


def planar():
    return spconv.SparseSequential(
        spconv.SubMConv2d(4, 8, 5, bias=False), BatchNorm1d(8), ReLU(),
        spconv.SparseConv2d(8, 8, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2),
                            bias=False))


def strided_pointwise():
    return spconv.SparseSequential(spconv.SparseConv3d(4, 5, 1, stride=2, bias=False))


MODELS = {"down-up": DownUp, "transposed": transposed, "pools": pools, "planar": planar,
          "strided-pointwise": strided_pointwise}

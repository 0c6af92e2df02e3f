"""Two LiDAR networks written as with spconv.pytorch.

VoxelBackBone8x is OpenPCDet's SECOND / PV-RCNN encoder; MinkUNet a
SparseResUNet-style segmentation network (MinkowskiEngine / TorchSparse's
MinkUNet, with spconv's layers). The code is the spconv.pytorch code: only
the three imports below differ. test/Python/spconv2_compare.py swaps in the
originals (`import spconv.pytorch as spconv`, `from torch.nn import
BatchNorm1d, Module, ModuleList, ReLU`, `from torch import cat`), builds both, and checks
that they compute the same outputs from the same weights.
"""
from functools import partial

# BEGIN imports
import spconv_mlir.nn as spconv
from spconv_mlir.nn import BatchNorm1d, Module, ModuleList, ReLU
from spconv_mlir.functional import cat
# END imports


def post_act_block(in_channels, out_channels, kernel_size, indice_key=None, stride=1,
                   padding=0, conv_type="subm", norm_fn=None):
    """OpenPCDet's conv + BatchNorm + ReLU block."""
    if conv_type == "subm":
        conv = spconv.SubMConv3d(in_channels, out_channels, kernel_size, bias=False,
                                 indice_key=indice_key)
    elif conv_type == "spconv":
        conv = spconv.SparseConv3d(in_channels, out_channels, kernel_size, stride=stride,
                                   padding=padding, bias=False, indice_key=indice_key)
    else:
        conv = spconv.SparseInverseConv3d(in_channels, out_channels, kernel_size,
                                          indice_key=indice_key, bias=False)
    return spconv.SparseSequential(conv, norm_fn(out_channels), ReLU())


class VoxelBackBone8x(Module):
    """OpenPCDet's VoxelBackBone8x: grid [41, 1600, 1408] (z, y, x) down to
    [2, 200, 176] with 128 channels."""

    def __init__(self, input_channels=4):
        super().__init__()
        norm_fn = partial(BatchNorm1d, eps=1e-3, momentum=0.01)
        self.conv_input = spconv.SparseSequential(
            spconv.SubMConv3d(input_channels, 16, 3, padding=1, bias=False, indice_key="subm1"),
            norm_fn(16), ReLU())
        block = post_act_block
        self.conv1 = spconv.SparseSequential(
            block(16, 16, 3, norm_fn=norm_fn, padding=1, indice_key="subm1"))
        self.conv2 = spconv.SparseSequential(
            block(16, 32, 3, norm_fn=norm_fn, stride=2, padding=1, indice_key="spconv2",
                  conv_type="spconv"),
            block(32, 32, 3, norm_fn=norm_fn, padding=1, indice_key="subm2"),
            block(32, 32, 3, norm_fn=norm_fn, padding=1, indice_key="subm2"))
        self.conv3 = spconv.SparseSequential(
            block(32, 64, 3, norm_fn=norm_fn, stride=2, padding=1, indice_key="spconv3",
                  conv_type="spconv"),
            block(64, 64, 3, norm_fn=norm_fn, padding=1, indice_key="subm3"),
            block(64, 64, 3, norm_fn=norm_fn, padding=1, indice_key="subm3"))
        self.conv4 = spconv.SparseSequential(
            block(64, 64, 3, norm_fn=norm_fn, stride=2, padding=(0, 1, 1),
                  indice_key="spconv4", conv_type="spconv"),
            block(64, 64, 3, norm_fn=norm_fn, padding=1, indice_key="subm4"),
            block(64, 64, 3, norm_fn=norm_fn, padding=1, indice_key="subm4"))
        self.conv_out = spconv.SparseSequential(
            spconv.SparseConv3d(64, 128, (3, 1, 1), stride=(2, 1, 1), padding=0, bias=False,
                                indice_key="spconv_down2"),
            norm_fn(128), ReLU())

    def forward(self, x):
        x = self.conv_input(x)
        x_conv1 = self.conv1(x)
        x_conv2 = self.conv2(x_conv1)
        x_conv3 = self.conv3(x_conv2)
        x_conv4 = self.conv4(x_conv3)
        return self.conv_out(x_conv4)


class ResidualBlock(Module):
    """Two 3x3x3 subm convs and a pointwise projection where the channels
    change, as MinkUNet's residual blocks."""

    def __init__(self, in_channels, out_channels, indice_key):
        super().__init__()
        self.net = spconv.SparseSequential(
            spconv.SubMConv3d(in_channels, out_channels, 3, bias=False, indice_key=indice_key),
            BatchNorm1d(out_channels), ReLU(),
            spconv.SubMConv3d(out_channels, out_channels, 3, bias=False,
                              indice_key=indice_key),
            BatchNorm1d(out_channels))
        if in_channels != out_channels:
            self.downsample = spconv.SparseSequential(
                spconv.SubMConv3d(in_channels, out_channels, 1, bias=False),
                BatchNorm1d(out_channels))
        else:
            self.downsample = None
        self.relu = ReLU()

    def forward(self, x):
        out = self.net(x)
        identity = x if self.downsample is None else self.downsample(x)
        return out.replace_feature(self.relu(out.features + identity.features))


class MinkUNet(Module):
    """A SparseResUNet: four 2x2x2 / stride-2 encoder stages (32, 64, 128,
    256 channels) and four decoder stages that invert them, concatenate the
    skip features and refine (256, 128, 96, 96), then per-site logits."""

    def __init__(self, in_channels=4, num_classes=19):
        super().__init__()
        enc, dec = [32, 64, 128, 256], [256, 128, 96, 96]
        self.stem = spconv.SparseSequential(
            spconv.SubMConv3d(in_channels, 32, 3, bias=False, indice_key="s0"),
            BatchNorm1d(32), ReLU(),
            spconv.SubMConv3d(32, 32, 3, bias=False, indice_key="s0"),
            BatchNorm1d(32), ReLU())
        self.down, self.enc, self.up, self.dec = [ModuleList() for _ in range(4)]
        channels = 32
        for i, width in enumerate(enc, 1):
            self.down.append(spconv.SparseSequential(
                spconv.SparseConv3d(channels, channels, 2, stride=2, bias=False,
                                    indice_key="down%d" % i),
                BatchNorm1d(channels), ReLU()))
            self.enc.append(ResidualBlock(channels, width, "s%d" % i))
            channels = width
        skips = [32] + enc[:-1]
        for i, width in enumerate(dec):
            level = 4 - i
            self.up.append(spconv.SparseSequential(
                spconv.SparseInverseConv3d(channels, width, 2, bias=False,
                                           indice_key="down%d" % level),
                BatchNorm1d(width), ReLU()))
            self.dec.append(ResidualBlock(width + skips[level - 1], width,
                                          "s%d" % (level - 1)))
            channels = width
        self.classifier = spconv.SubMConv3d(channels, num_classes, 1, bias=True)

    def forward(self, x):
        x = self.stem(x)
        skips = [x]
        for down, enc in zip(self.down, self.enc):
            x = enc(down(x))
            skips.append(x)
        for i, (up, dec) in enumerate(zip(self.up, self.dec)):
            u = up(x)
            skip = skips[3 - i]
            x = dec(u.replace_feature(cat([u.features, skip.features], 1)))
        return self.classifier(x)

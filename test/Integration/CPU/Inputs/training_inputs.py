"""Writes the inputs of examples/minkunet_train.mlir's @train (or, with
`gradients`, of @minkunet_loss_and_gradients: one step, no learning rate)
for a small generated scan (examples/training/train_minkunet.py's prepare)
into a folder and prints spconv-run's --input arguments, one per line, for
a response file.

usage: training_inputs.py SRC_ROOT WORK_DIR SITES [gradients]
"""
import os
import sys

root, work, sites = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, os.path.join(root, "examples", "training"))
import train_minkunet  # noqa: E402

os.makedirs(work, exist_ok=True)
arrays = train_minkunet.prepare(work, train_minkunet.MODEL, sites, seed=3, lr=1.0)
if sys.argv[4:] == ["gradients"]:
    del arrays[3]  # the learning rate
print("\n".join(train_minkunet.save_inputs(work, arrays)))

"""usage: same_kernel_objects.py STORE_A STORE_B

Compares the kernel entries (krn-*) of two kernel stores: the same keys,
and each key's kernel.o byte for byte. Exits 1, naming the first
difference, if they differ."""
import glob
import os
import sys


def kernels(store):
    return {os.path.basename(d): d for d in glob.glob(os.path.join(store, "kernels-v1", "krn-*"))}


a, b = (kernels(s) for s in sys.argv[1:3])
if a.keys() != b.keys():
    sys.exit("the stores hold other kernels: %s against %s" % (sorted(a), sorted(b)))
for key in sorted(a):
    with open(os.path.join(a[key], "kernel.o"), "rb") as f, \
            open(os.path.join(b[key], "kernel.o"), "rb") as g:
        if f.read() != g.read():
            sys.exit("kernel %s: the objects differ" % key)
print("%d kernel objects, the same in both stores" % len(a))

"""PASS / FAIL lines for the Python tests that check many things in one
run: `check` prints one line per check and remembers the failures, and
`finish` prints their count and exits with it; `relative_difference` is the
measure of agreement they compare with tolerances."""
import sys

failures = []


def check(name, ok, detail=""):
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, (": " + detail) if detail and not ok
                       else ""))
    if not ok:
        failures.append(name)


def finish():
    print("%d failed" % len(failures))
    sys.exit(1 if failures else 0)


def relative_difference(a, b):
    """The largest element-wise difference of tensors `a` and `b` over the
    largest magnitude of `b`."""
    return ((a - b).abs().max() / b.abs().max().clamp(min=1e-30)).item()

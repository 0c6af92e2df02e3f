"""PASS / FAIL lines for the Python tests that check many things in one
run: `check` prints one line per check and remembers the failures, and
`finish` prints their count and exits with it."""
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

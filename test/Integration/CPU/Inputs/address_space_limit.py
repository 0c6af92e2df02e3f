"""Runs a command under an address-space limit (RLIMIT_AS), as a
container's memory limit or `ulimit -v` would set; exits with its status,
or prints "killed by signal N" and exits 98 if a signal ended it.

usage: address_space_limit.py MIB COMMAND...
"""
import resource
import subprocess
import sys

limit = int(sys.argv[1]) * 1024 * 1024
try:
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
except (ValueError, OSError) as e:
    sys.exit("cannot limit the address space to %s MiB: %s" % (sys.argv[1], e))
status = subprocess.call(sys.argv[2:])
if status < 0:
    print("killed by signal %d" % -status, file=sys.stderr)
    sys.exit(98)
sys.exit(status)

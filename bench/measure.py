"""What the side-by-side benchmark scripts share (bench/compressed.py,
bench/expect.py, bench/parquet.py): one timed run of a child process."""

import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child(args, cwd=ROOT):
    """Run `args` in `cwd` (the repository): (wall seconds, CPU seconds of the
    child, its peak RSS in KiB, its stdout as bytes), from os.wait4. A
    child that fails stops the benchmark with its stderr."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {' '.join(args)} failed:\n{err.decode()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out


def hql_run(hql, program, threads):
    """`hql run PROGRAM`, with `--threads N` unless `threads` is 0."""
    args = [hql, "run", program]
    if threads:
        args[2:2] = ["--threads", str(threads)]
    return child(args)


def orders(path="bench/data/orders-1m.jsonl"):
    """The benchmark's 1M orders at `path` (bench/gen.py), made when missing."""
    ensure(path, [sys.executable, "bench/gen.py", "--records", "1000000", "--out", path])


def ensure(path, make):
    """Run `make` in the repository when `path` (relative to it) is missing."""
    if not os.path.exists(os.path.join(ROOT, path)):
        subprocess.run(make, cwd=ROOT, check=True)

"""Fails when a GPU kernel of a program runs on one block (one thread, one
warp or one block of threads: grid 1) over more than 64 KiB of buffers: a
reduction or scatter whose result is small but whose input is large must run
as a parallel tree of a fixed order instead. Reads `describe --json`
(its gpu.kernel_table) on stdin; prints the offenders and a summary line.
"""
import json
import sys

LIMIT = 64 * 1024


def main():
    program = json.load(sys.stdin)
    table = program["gpu"]["kernel_table"]
    serial = [k for k in table if k["grid"] == 1 and k["buffer_bytes"] > LIMIT]
    for k in serial:
        print(f"serial kernel {k['name']}: grid 1 x block {k['block']} over "
              f"{k['buffer_bytes']} bytes")
    print(f"{len(table)} kernels, {len(serial)} on one block over more than "
          f"64 KiB")
    sys.exit(1 if serial else 0)


if __name__ == "__main__":
    main()

"""Resource use of a program's GPU kernels from `ptxas -v`, per kernel.

ptxas_resources.py PTX_FILE PTXAS_V_OUTPUT

Prints one line per kernel that computes with tensor cores (its PTX has
mma.sync): `mma NAME registers R shared S spills N`, then a summary line
`mma kernels K, spilling kernels (all) M, most registers R`. A kernel's
spills are the bytes of its spill stores plus loads.
"""
import re
import sys


def entries(ptx):
    """{kernel name: its PTX text} of every .entry."""
    parts = re.split(r"(?m)^\.visible \.entry ", ptx)[1:]
    return {p.split("(", 1)[0]: p for p in parts}


def resources(log):
    """{kernel name: (registers, shared bytes, spill bytes)} from ptxas -v."""
    out, name = {}, None
    spills = shared = 0
    for line in log.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '?(\w+)'?", line)
        if m:
            name = m.group(1)
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            spills = int(m.group(1)) + int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m and name:
            smem = re.search(r"(\d+) bytes smem", line)
            shared = int(smem.group(1)) if smem else 0
            out[name] = (int(m.group(1)), shared, spills)
            spills = 0
    return out


def main():
    ptx = open(sys.argv[1]).read()
    used = resources(open(sys.argv[2]).read())
    kernels = entries(ptx)
    mma = sorted(n for n, text in kernels.items() if "mma.sync" in text)
    for name in mma:
        registers, shared, spills = used[name]
        print(f"mma {name} registers {registers} shared {shared} spills {spills}")
    spilling = sum(1 for r in used.values() if r[2])
    most = max((used[n][0] for n in mma), default=0)
    print(f"mma kernels {len(mma)}, spilling kernels (all) {spilling}, most registers {most}")


if __name__ == "__main__":
    main()

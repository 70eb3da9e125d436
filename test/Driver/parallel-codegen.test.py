"""Prints the parts of a program's GPU images (describe --json): their
number, then each architecture and kind's parts."""
import collections
import json
import sys

gpu = json.load(open(sys.argv[1]))["gpu"]
parts = collections.defaultdict(list)
for image in gpu["images"]:
    parts[(image["arch"], image["kind"])].append(image["part"])
count = max(max(p) for p in parts.values()) + 1
print("parts", count)
for (arch, kind), numbers in sorted(parts.items(), key=lambda kv: (kv[0][0], kv[0][1] != "ptx")):
    print(arch, kind, *sorted(numbers))

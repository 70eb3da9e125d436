#!/usr/bin/python3
"""`compare_eval.py LOG.jsonl REF.txt RTOL`: the loss of the last eval
record of a program's --log (eval of the final weights, in eval mode)
against the `loss X` line a reference script prints; prints `eval loss: ok`
or `eval loss: MISMATCH`, with both values."""
import json
import sys

records = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
ours = [r for r in records if r.get("eval")][-1]["loss"]
ref = next(float(line.split()[1]) for line in open(sys.argv[2]) if line.startswith("loss "))
rel = abs(ours - ref) / max(abs(ref), 1e-300)
ok = rel <= float(sys.argv[3])
print(f"eval loss: {'ok' if ok else 'MISMATCH'} ({ours!r} against {ref!r}, rel {rel:.1e})")
sys.exit(0 if ok else 1)

"""value-constructors.test: the program's outputs against NumPy."""
import sys

import numpy as np

x = np.load(sys.argv[1]).astype(np.float64)
y = np.load(sys.argv[2])
s = np.zeros((2, 4))
for i in range(3):
    s = np.tanh(s + x[:, i, :])
want = {"state": (s, 1e-6),
        "filled": (np.full((2, 4), 2.5), 0),
        "like": (np.trunc(x[:, 0, :]) * 0 + 3, 0),
        "half": (x[:, 2, :], 4e-3)}
ok = True
for name, (expected, tol) in want.items():
    err = np.max(np.abs(y[name] - expected))
    good = y[name].shape == expected.shape and err <= tol
    print(name, "ok" if good else f"MISMATCH {err}")
    ok = ok and good
sys.exit(0 if ok else 1)

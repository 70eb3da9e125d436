"""Writes a small random .npy array for end-to-end tests (NumPy only).

make_data.py OUT.npy DTYPE SHAPE [--seed N] [--low A --high B]
DTYPE is a .mdl dtype name (f32, f64, i32, i64, u8, u16); SHAPE is
comma-separated ("2,3"). Floats are standard normal unless --low/--high are
given; integers are uniform in [low, high).
"""
import argparse

import numpy as np

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32,
          "i64": np.int64, "u8": np.uint8, "u16": np.uint16}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("dtype", choices=sorted(DTYPES))
    parser.add_argument("shape")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--low", type=float)
    parser.add_argument("--high", type=float)
    args = parser.parse_args()
    shape = tuple(int(d) for d in args.shape.split(",") if d)
    rng = np.random.default_rng(args.seed)
    dtype = DTYPES[args.dtype]
    if np.issubdtype(dtype, np.integer):
        low = 0 if args.low is None else int(args.low)
        high = 10 if args.high is None else int(args.high)
        data = rng.integers(low, high, size=shape)
    elif args.low is not None or args.high is not None:
        data = rng.uniform(args.low or 0.0, args.high or 1.0, size=shape)
    else:
        data = rng.standard_normal(size=shape)
    np.save(args.out, data.astype(dtype))


if __name__ == "__main__":
    main()

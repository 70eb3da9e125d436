// Parameter initialisers (spec §6) as PyTorch's nn.init defines them, drawn
// from the runtime's PCG64 so that a seed gives the same values everywhere.
#include "runtime/driver/Initializers.h"

#include "runtime/io/Random.h"
#include "runtime/io/Shape.h"

#include <cmath>

namespace modelc::rt {

namespace {

Status badInit(const ParamInfo &p, const std::string &why) {
  return Status::error("internal error: parameter " + p.name + ": " + why,
                       kExitInternal);
}

size_t expectedArgs(InitKind kind) {
  switch (kind) {
  case InitKind::Zeros:
  case InitKind::Ones:
  case InitKind::XavierUniform:
    return 0;
  case InitKind::Full:
  case InitKind::KaimingUniform:
  case InitKind::TruncatedNormal:
    return 1;
  case InitKind::Normal:
  case InitKind::Uniform:
    return 2;
  }
  return 0;
}

// torch.nn.init._calculate_fan_in_and_fan_out: dims 0 and 1 times the
// receptive field (the product of the remaining dims).
void fans(const std::vector<int64_t> &shape, double &fanIn, double &fanOut) {
  double receptive = 1;
  for (size_t i = 2; i < shape.size(); ++i)
    receptive *= double(shape[i]);
  fanIn = double(shape[1]) * receptive;
  fanOut = double(shape[0]) * receptive;
}

// Draws every element with `draw` and stores it as T.
template <typename T, typename Draw>
void fill(void *dst, uint64_t count, Draw draw) {
  T *out = static_cast<T *>(dst);
  for (uint64_t i = 0; i < count; ++i)
    out[i] = T(draw());
}

template <typename T>
Status initialize(const ParamInfo &p, uint64_t count, uint64_t seed,
                  void *dst) {
  Rng rng(seed, parameterStream(p.name));
  const std::vector<double> &a = p.initArgs;
  switch (p.init) {
  case InitKind::Zeros:
    fill<T>(dst, count, [] { return 0.0; });
    return Status();
  case InitKind::Ones:
    fill<T>(dst, count, [] { return 1.0; });
    return Status();
  case InitKind::Full:
    fill<T>(dst, count, [&] { return a[0]; });
    return Status();
  case InitKind::Normal:
    fill<T>(dst, count, [&] { return a[0] + a[1] * rng.normal(); });
    return Status();
  case InitKind::Uniform:
    fill<T>(dst, count, [&] { return a[0] + (a[1] - a[0]) * rng.uniform(); });
    return Status();
  case InitKind::KaimingUniform: {
    if (!(a[0] > 0))
      return badInit(p, "kaiming_uniform needs fan_in > 0");
    double bound = 1.0 / std::sqrt(a[0]);
    fill<T>(dst, count, [&] { return bound * (2 * rng.uniform() - 1); });
    return Status();
  }
  case InitKind::XavierUniform: {
    if (p.shape.size() < 2)
      return badInit(p, "xavier_uniform needs at least 2 dimensions");
    double fanIn, fanOut;
    fans(p.shape, fanIn, fanOut);
    double bound = std::sqrt(6.0 / (fanIn + fanOut));
    fill<T>(dst, count, [&] { return bound * (2 * rng.uniform() - 1); });
    return Status();
  }
  case InitKind::TruncatedNormal:
    // N(0, std²) redrawn outside ±2 std (tf.keras' TruncatedNormal, and
    // nn.init.trunc_normal_(std=s, a=-2s, b=2s)); no variance correction.
    fill<T>(dst, count, [&] {
      double z = rng.normal();
      while (std::fabs(z) > 2)
        z = rng.normal();
      return a[0] * z;
    });
    return Status();
  }
  return badInit(p, "unknown initialiser");
}

} // namespace

uint64_t parameterStream(const std::string &name) {
  uint64_t h = 0xcbf29ce484222325ull; // FNV-1a, 64 bits
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h & (kDataOrderStream - 1);
}

Status initializeParameter(const ParamInfo &param, uint64_t seed, void *dst) {
  if (param.initArgs.size() != expectedArgs(param.init))
    return badInit(param, "wrong number of initialiser arguments");
  uint64_t count = checkedElementCount(param.shape).value_or(0);
  if (param.dtype == DType::F32)
    return initialize<float>(param, count, seed, dst);
  if (param.dtype == DType::F64)
    return initialize<double>(param, count, seed, dst);
  // An integer module buffer (num_batches_tracked) starts at a constant.
  bool constant = param.init == InitKind::Zeros ||
                  param.init == InitKind::Ones || param.init == InitKind::Full;
  if (!param.trainable && constant && param.dtype == DType::I64)
    return initialize<int64_t>(param, count, seed, dst);
  if (!param.trainable && constant && param.dtype == DType::I32)
    return initialize<int32_t>(param, count, seed, dst);
  return badInit(param, std::string("parameters are f32 or f64, not ") +
                            dtypeName(param.dtype));
}

Status initializeParameters(const Manifest &manifest, uint64_t seed,
                            Arena &arena) {
  for (const ParamInfo &p : manifest.params)
    MODELC_RETURN_IF_ERROR(
        initializeParameter(p, seed, arena.at(manifest.paramBuffer(p))));
  return Status();
}

} // namespace modelc::rt

// PCG64 (XSL-RR 128/64) and the distributions built on it.
#include "runtime/io/Random.h"

#include <cmath>

namespace modelc::rt {

namespace {

/// PCG_DEFAULT_MULTIPLIER_128 of the PCG reference implementation.
constexpr __uint128_t kMultiplier =
    (__uint128_t(0x2360ED051FC65DA4ULL) << 64) | 0x4385DF649FCCF645ULL;

uint64_t rotateRight(uint64_t value, unsigned amount) {
  return (value >> amount) | (value << ((64 - amount) & 63));
}

} // namespace

Rng::Rng(uint64_t seed, uint64_t stream)
    : state_(0), increment_((__uint128_t(stream) << 1) | 1) {
  step();
  state_ += seed;
  step();
}

void Rng::step() { state_ = state_ * kMultiplier + increment_; }

uint64_t Rng::next() {
  step();
  uint64_t folded = uint64_t(state_ >> 64) ^ uint64_t(state_);
  return rotateRight(folded, unsigned(state_ >> 122));
}

double Rng::uniform() { return double(next() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  // 1 - uniform() lies in (0, 1], so the logarithm is finite.
  double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));
  double angle = 2.0 * M_PI * uniform();
  return radius * std::cos(angle);
}

uint64_t Rng::below(uint64_t n) {
  if (n == 0)
    return 0;
  // Values below 2^64 mod n would make small results more likely; skip them.
  uint64_t threshold = (0 - n) % n;
  while (true) {
    uint64_t value = next();
    if (value >= threshold)
      return value % n;
  }
}

std::array<uint64_t, 4> Rng::saveState() const {
  return {uint64_t(state_ >> 64), uint64_t(state_), uint64_t(increment_ >> 64),
          uint64_t(increment_)};
}

void Rng::restoreState(const std::array<uint64_t, 4> &words) {
  state_ = (__uint128_t(words[0]) << 64) | words[1];
  increment_ = (__uint128_t(words[2]) << 64) | words[3] | 1;
}

} // namespace modelc::rt

// The runtime's one random number generator: PCG64 (XSL-RR 128/64, O'Neill
// 2014, the generator behind numpy's PCG64), so that data order and
// parameter initialisers are the same on every platform. The standard
// library's distributions are implementation-defined and are not used.
#pragma once

#include <array>
#include <cstdint>

namespace modelc::rt {

/// Streams at or above this value are reserved for the data order
/// (BatchOrder uses kDataOrderStream + epoch); other users pick smaller ones.
inline constexpr uint64_t kDataOrderStream = uint64_t(1) << 63;

class Rng {
public:
  /// Seeds as the PCG reference's pcg64_srandom_r(seed, stream): different
  /// streams give independent sequences for the same seed.
  explicit Rng(uint64_t seed, uint64_t stream = 0);

  /// The next 64 random bits.
  uint64_t next();
  /// Uniform in [0, 1) with 53 random bits: (next() >> 11) * 2^-53.
  double uniform();
  /// Standard normal by Box–Muller: consumes two uniforms, returns one value
  /// (no cached second value, so the state is just the generator's).
  double normal();
  /// Uniform in [0, n) without modulo bias (rejection as in PCG's
  /// bounded_rand); 0 when n is 0.
  uint64_t below(uint64_t n);

  /// The state as four words (state high, state low, increment high,
  /// increment low), for checkpoints; restoreState continues exactly.
  std::array<uint64_t, 4> saveState() const;
  void restoreState(const std::array<uint64_t, 4> &words);

private:
  void step();
  __uint128_t state_;
  __uint128_t increment_; // odd; selects the stream
};

} // namespace modelc::rt

#ifndef PLACEMENT_CORE_QUEUE_RNG_H_
#define PLACEMENT_CORE_QUEUE_RNG_H_

#include <cmath>
#include <cstdint>

namespace placement::core {

// A deterministic generator (splitmix64): forecasts are the same for the
// same state, so plans made from one snapshot are too.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // In [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Mean 1.
  double Exponential() { return -std::log1p(-Uniform()); }
  // Standard normal (Box-Muller).
  double Normal() {
    const double u = 1 - Uniform();  // in (0, 1]
    return std::sqrt(-2 * std::log(u)) *
           std::cos(6.283185307179586 * Uniform());
  }

 private:
  uint64_t state_;
};

}  // namespace placement::core

#endif  // PLACEMENT_CORE_QUEUE_RNG_H_

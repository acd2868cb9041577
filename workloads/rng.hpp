// A seedable random generator with byte-identical output on every platform:
// xoshiro256** seeded through splitmix64, and our own uniform draws (the
// std:: distributions are implementation-defined).
#pragma once

#include <cstdint>

namespace epsim::workloads {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// One stream per (seed, a, b, c, d): streams for different tuples are
// independent for all practical purposes, so results do not depend on the
// order or the thread in which streams are drawn.
inline std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0,
                                 std::uint64_t c = 0, std::uint64_t d = 0) {
  std::uint64_t s = seed;
  std::uint64_t h = splitmix64(s);
  for (std::uint64_t part : {a, b, c, d}) {
    s = h ^ (part + 0x632be59bd9b4e019ULL);
    h = splitmix64(s);
  }
  return h;
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (std::uint64_t& word : s_) word = splitmix64(seed);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject), n >= 1.
  std::uint32_t below(std::uint32_t n) {
    std::uint64_t m = (next() >> 32) * n;
    auto low = static_cast<std::uint32_t>(m);
    if (low < n) {
      const std::uint32_t threshold = static_cast<std::uint32_t>(-n) % n;
      while (low < threshold) {
        m = (next() >> 32) * n;
        low = static_cast<std::uint32_t>(m);
      }
    }
    return static_cast<std::uint32_t>(m >> 32);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

// 32-bit draws, two per generator step (high half first): the samplers'
// inner loops need 32 bits per draw, and halving the generator calls is
// measurable there.
class HalfWords {
 public:
  std::uint32_t next(Rng& rng) {
    spare_ = !spare_;
    if (!spare_) return static_cast<std::uint32_t>(word_);
    word_ = rng.next();
    return static_cast<std::uint32_t>(word_ >> 32);
  }

 private:
  std::uint64_t word_ = 0;
  bool spare_ = false;  // whether the low half of word_ is unused
};

}  // namespace epsim::workloads

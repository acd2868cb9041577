// FNV-1a over length-prefixed fields, two lanes.
#include "core/digest.hpp"

#include <fmt/format.h>

namespace epsim {

void Digest::mix(unsigned char byte) {
  constexpr std::uint64_t kPrime = 1099511628211ULL;  // FNV-1a's 64-bit prime
  a_ = (a_ ^ byte) * kPrime;
  b_ = (b_ ^ static_cast<unsigned char>(byte ^ 0x5a)) * kPrime;
}

Digest& Digest::add(std::string_view field) {
  std::uint64_t size = field.size();
  for (int i = 0; i < 8; ++i, size >>= 8) mix(static_cast<unsigned char>(size & 0xff));
  for (const char c : field) mix(static_cast<unsigned char>(c));
  return *this;
}

std::string Digest::hex() const { return fmt::format("{:016x}{:016x}", a_, b_); }

}  // namespace epsim

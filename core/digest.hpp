// A 128-bit digest of byte strings (two FNV-1a 64 lanes of different
// offsets, each field length-prefixed so that ("ab","c") and ("a","bc")
// differ), as 32 hex digits: a cache key, not a cryptographic hash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace epsim {

class Digest {
 public:
  Digest& add(std::string_view field);
  std::string hex() const;  // 32 lowercase hex digits

 private:
  void mix(unsigned char byte);
  std::uint64_t a_ = 14695981039346656037ULL;  // FNV-1a's offset basis
  std::uint64_t b_ = 0x6c62272e07bb0142ULL;    // another basis for the second lane
};

}  // namespace epsim

// The cache key's digest: fixed values (a changed digest would orphan every
// results file) and field boundaries that count.
#include <catch2/catch.hpp>

#include "core/digest.hpp"

using epsim::Digest;

TEST_CASE("the digest is FNV-1a over length-prefixed fields, two lanes", "[digest]") {
  // Values computed independently (Python, the same definition).
  CHECK(Digest().add("epsim").hex() == "1640a4e5b9067b3c1ed34e988ba814a7");
  CHECK(Digest().add("ab").add("c").hex() == "7e60470bf599cad6b4cc4002ff061599");
  CHECK(Digest().add("a").add("bc").hex() == "ba1e1f0e0704d8eaa7482c01ca2e368d");
  CHECK(Digest().add("x").hex() != Digest().add("y").hex());
}

// The stable string hashes behind Hashing and the lookups' OOV buckets, chosen to match
// TensorFlow (and so Keras) bit for bit on every platform:
//   fingerprint64  = FarmHash Fingerprint64 (farmhash::na::Hash64), what
//                    tf.strings.to_hash_bucket_fast uses;
//   siphash64      = SipHash-2-4 with a 128-bit key, what tf.strings.to_hash_bucket_strong uses
//                    (Keras' Hashing with a `salt`).
// Bytes are read little-endian explicitly, so the values do not depend on the host.
#pragma once

#include <cstdint>
#include <string_view>

namespace strata::preprocessing {

uint64_t fingerprint64(std::string_view s);
uint64_t siphash64(uint64_t key0, uint64_t key1, std::string_view s);

}  // namespace strata::preprocessing

#include <gtest/gtest.h>

#include <string>

#include "framework/summary/crc32c.h"

namespace strata {
namespace {

TEST(TFRecordCrc32c, KnownValues) {
  EXPECT_EQ(crc32c::value("123456789"), 0xE3069283u);  // the standard check value
  EXPECT_EQ(crc32c::value(""), 0u);
  // RFC 3720 (iSCSI) B.4 test vectors.
  EXPECT_EQ(crc32c::value(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c::value(std::string(32, '\xFF')), 0x62A8AB43u);
}

TEST(TFRecordCrc32c, MaskIsTensorFlows) {
  EXPECT_EQ(crc32c::mask(0), 0xa282ead8u);
  const uint32_t c = 0xE3069283u;
  EXPECT_EQ(crc32c::mask(c), static_cast<uint32_t>(((c >> 15) | (c << 17)) + 0xa282ead8u));
  // The length CRC of an empty record: the CRC of 8 zero bytes, masked.
  EXPECT_EQ(crc32c::mask(crc32c::value(std::string(8, '\0'))), 0x07980329u);
  for (uint32_t v : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu, 0x80000000u, 0x5d5d5d5du}) {
    EXPECT_EQ(crc32c::unmask(crc32c::mask(v)), v);
    EXPECT_NE(crc32c::mask(v), v);
  }
}

}  // namespace
}  // namespace strata

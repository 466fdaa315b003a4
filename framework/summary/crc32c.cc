#include "framework/summary/crc32c.h"

#include <boost/crc.hpp>

namespace strata::crc32c {

// Castagnoli polynomial; input and output reflected; initial value and final XOR all ones.
// Boost picks a table-driven implementation for these parameters.
uint32_t value(std::string_view data) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> engine;
  engine.process_bytes(data.data(), data.size());
  return engine.checksum();
}

}  // namespace strata::crc32c

// Human-readable byte counts for memory messages: "512 bytes", "1.50 GiB". Binary units
// (KiB = 1024 bytes), as PyTorch's and TensorFlow's out-of-memory messages print them.
#pragma once

#include <cstddef>
#include <string>

namespace strata {

std::string format_bytes(size_t bytes);

}  // namespace strata

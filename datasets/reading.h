// Internal: what the file readers share. Every size is checked before memory is allocated for
// it, and running out of memory is a ResourceExhaustedError naming the file and the size, never
// a std::bad_alloc escaping to std::terminate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/core/tensor.h"

namespace strata::data::detail {

// The size of the regular file `path`. IOError (prefixed with `where`) when it is missing or is
// not a regular file.
uint64_t regular_file_size(const std::string& path, const std::string& where);

// The whole file. ValueError when it is larger than `max_bytes` (the format's own bound, named
// in `what_fits`, e.g. "the image decoder reads at most 2 GiB"); IOError when it cannot be read;
// ResourceExhaustedError when memory for it cannot be had.
std::string read_file_bytes(const std::string& path, const std::string& where, uint64_t max_bytes,
                            const std::string& what_fits);

// Tensor::empty, with running out of memory reported as a ResourceExhaustedError that names
// `where` and the size.
Tensor empty_tensor(const Shape& shape, DType dtype, const std::string& where);

// A byte buffer of `n` bytes, likewise.
std::vector<unsigned char> byte_buffer(uint64_t n, const std::string& where);

}  // namespace strata::data::detail

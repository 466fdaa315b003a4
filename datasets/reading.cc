#include "datasets/reading.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>

#include "framework/core/error.h"
#include "framework/memory/format_bytes.h"

namespace strata::data::detail {
namespace {

[[noreturn]] void out_of_memory(const std::string& where, uint64_t bytes, const char* detail) {
  throw ResourceExhaustedError(where + ": out of memory allocating " + format_bytes(bytes) +
                               " (" + std::to_string(bytes) + " bytes)" + detail +
                               "; free memory, or raise the process's memory limit");
}

}  // namespace

uint64_t regular_file_size(const std::string& path, const std::string& where) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw IOError(where + ": no such file" +
                  (std::filesystem::exists(path, ec) ? " (it is not a regular file)" : ""));
  }
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw IOError(where + ": cannot read its size: " + ec.message());
  return size;
}

std::string read_file_bytes(const std::string& path, const std::string& where, uint64_t max_bytes,
                            const std::string& what_fits) {
  const uint64_t size = regular_file_size(path, where);
  if (size > max_bytes) {
    throw ValueError(where + ": the file is " + format_bytes(size) + " (" + std::to_string(size) +
                     " bytes), more than " + what_fits);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(where + ": cannot open: " + std::strerror(errno));
  std::string bytes;
  try {
    bytes.resize(size_t(size));
  } catch (const std::bad_alloc&) {
    out_of_memory(where, size, " to read the file");
  } catch (const std::length_error&) {
    out_of_memory(where, size, " to read the file");
  }
  in.read(bytes.data(), std::streamsize(size));
  if (uint64_t(in.gcount()) != size) {
    throw IOError(where + ": read " + std::to_string(in.gcount()) + " of " +
                  std::to_string(size) + " bytes (the file changed while being read?)");
  }
  return bytes;
}

Tensor empty_tensor(const Shape& shape, DType dtype, const std::string& where) {
  try {
    return Tensor::empty(shape, dtype);
  } catch (const ResourceExhaustedError& e) {
    throw ResourceExhaustedError(where + ": " + e.what());
  } catch (const std::bad_alloc&) {
    out_of_memory(where, uint64_t(shape.numel()) * dtype_size(dtype),
                  (" for a " + shape.to_string() + " tensor").c_str());
  }
}

std::vector<unsigned char> byte_buffer(uint64_t n, const std::string& where) {
  try {
    return std::vector<unsigned char>(size_t(n));
  } catch (const std::bad_alloc&) {
    out_of_memory(where, n, "");
  } catch (const std::length_error&) {
    out_of_memory(where, n, "");
  }
}

}  // namespace strata::data::detail

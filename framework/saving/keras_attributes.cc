#include "framework/saving/keras_attributes.h"

#include <algorithm>
#include <iostream>

#include "framework/core/error.h"

namespace strata::saving {

void write_string_list_attribute(hdf5::Group& group, const std::string& name,
                                 const std::vector<std::string>& values) {
  if (values.empty()) {
    group.write_empty_list(name);
    return;
  }
  size_t itemsize = 1;  // numpy's 'S' itemsize: the longest item, at least 1
  for (const std::string& v : values) {
    if (v.size() > kHdf5ObjectHeaderLimit) {
      throw ValueError("Saving: attribute '" + name + "' of '" + group.path() + "' holds a " +
                       std::to_string(v.size()) + "-byte string ('" + v.substr(0, 40) +
                       "...'), longer than HDF5's " + std::to_string(kHdf5ObjectHeaderLimit) +
                       "-byte object header limit; use shorter layer names");
    }
    itemsize = std::max(itemsize, v.size());
  }
  // The smallest number of chunks whose largest (numpy.array_split: the first n % k chunks hold
  // one more item) fits the limit.
  const size_t n = values.size();
  size_t chunks = 1;
  while (((n + chunks - 1) / chunks) * itemsize > kHdf5ObjectHeaderLimit) ++chunks;
  if (chunks == 1) {
    group.write_string_list(name, values, hdf5::StringStorage::kFixedLength, itemsize);
    return;
  }
  size_t start = 0;
  for (size_t c = 0; c < chunks; ++c) {
    const size_t size = n / chunks + (c < n % chunks ? 1 : 0);
    std::vector<std::string> part(values.begin() + std::ptrdiff_t(start),
                                  values.begin() + std::ptrdiff_t(start + size));
    // Every chunk keeps the whole array's itemsize, as numpy slices do: pad the longest one.
    group.write_string_list(name + std::to_string(c), part, hdf5::StringStorage::kFixedLength,
                            itemsize);
    start += size;
  }
}

std::vector<std::string> read_string_list_attribute(const hdf5::Group& group,
                                                    const std::string& name) {
  if (group.has_attribute(name)) return group.read_string_list(name);
  std::vector<std::string> out;
  for (size_t c = 0; group.has_attribute(name + std::to_string(c)); ++c) {
    std::vector<std::string> part = group.read_string_list(name + std::to_string(c));
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

bool has_string_list_attribute(const hdf5::Group& group, const std::string& name) {
  return group.has_attribute(name) || group.has_attribute(name + "0");
}

std::string keras2_weight_name(const Variable& variable) { return variable.name() + ":0"; }

void warn(const std::string& message) { std::cerr << "WARNING: " << message << std::endl; }

}  // namespace strata::saving

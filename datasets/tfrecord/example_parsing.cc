#include "datasets/tfrecord/example_parsing.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "datasets/tfrecord/example.pb.h"  // generated from example.proto
#include "datasets/tfrecord/tfrecord_dataset.h"
#include "framework/core/error.h"

namespace strata::data {
namespace {

namespace pb = ::tensorflow;

const char* kind_name(pb::Feature::KindCase kind) {
  switch (kind) {
    case pb::Feature::kBytesList: return "bytes_list";
    case pb::Feature::kFloatList: return "float_list";
    case pb::Feature::kInt64List: return "int64_list";
    case pb::Feature::KIND_NOT_SET: break;
  }
  return "no list";
}

pb::Feature::KindCase kind_of(DType dtype) {
  switch (dtype) {
    case DType::kInt64: return pb::Feature::kInt64List;
    case DType::kFloat32: return pb::Feature::kFloatList;
    default: return pb::Feature::kBytesList;  // uint8; other dtypes are refused up front
  }
}

std::string where(const char* op, const std::string& name, size_t record) {
  return std::string(op) + ": feature '" + name + "' of record " + std::to_string(record);
}

// The values of one feature over a batch, gathered record by record.
class Column {
 public:
  Column(const std::string& name, const FeatureSpec& spec) : name_(name), spec_(spec) {
    const FixedLenFeature* fixed = std::get_if<FixedLenFeature>(&spec);
    dtype_ = fixed ? fixed->dtype : std::get<VarLenFeature>(spec).dtype;
    if (dtype_ != int64 && dtype_ != float32 && dtype_ != uint8) {
      throw ValueError("parse_example: feature '" + name + "' asks for dtype " +
                       dtype_name(dtype_) + "; expected int64 (Int64List), float32 (FloatList) "
                       "or uint8 (BytesList)");
    }
    if (fixed) check_default(*fixed);
  }

  void add(const pb::Features& features, size_t record, const char* op) {
    const auto& map = features.feature();
    const auto it = map.find(name_);
    const FixedLenFeature* fixed = std::get_if<FixedLenFeature>(&spec_);
    if (it == map.end()) {
      if (!fixed) return rows_.push_back(0);  // VarLen: no values
      if (!fixed->default_value) {
        throw ValueError(where(op, name_, record) + " is missing and its FixedLenFeature has no "
                         "default_value; give one, or use VarLenFeature");
      }
      return add_default(*fixed);
    }
    const pb::Feature& f = it->second;
    const int64_t count = f.kind_case() == pb::Feature::kInt64List   ? f.int64_list().value_size()
                          : f.kind_case() == pb::Feature::kFloatList ? f.float_list().value_size()
                          : f.kind_case() == pb::Feature::kBytesList ? f.bytes_list().value_size()
                                                                     : 0;
    // A Feature with no list set holds no values, whatever the spec's kind.
    if (f.kind_case() != pb::Feature::KIND_NOT_SET && f.kind_case() != kind_of(dtype_)) {
      throw ValueError(where(op, name_, record) + " is a " + kind_name(f.kind_case()) +
                       ", but the spec asks for " + dtype_name(dtype_) + " (a " +
                       kind_name(kind_of(dtype_)) + "); fix the spec's dtype");
    }
    if (fixed && count != fixed->shape.numel()) {
      throw ValueError(where(op, name_, record) + ": expected " +
                       std::to_string(fixed->shape.numel()) + " values (shape " +
                       fixed->shape.to_string() + "), found " + std::to_string(count) +
                       "; fix the FixedLenFeature's shape or use VarLenFeature");
    }
    if (f.kind_case() == pb::Feature::kInt64List) {
      ints_.insert(ints_.end(), f.int64_list().value().begin(), f.int64_list().value().end());
    } else if (f.kind_case() == pb::Feature::kFloatList) {
      floats_.insert(floats_.end(), f.float_list().value().begin(), f.float_list().value().end());
    } else if (f.kind_case() == pb::Feature::kBytesList) {
      for (const std::string& s : f.bytes_list().value()) add_string(s);
    }
    rows_.push_back(count);
  }

  ParsedFeature finish(bool single) const {
    ParsedFeature out;
    const FixedLenFeature* fixed = std::get_if<FixedLenFeature>(&spec_);
    const auto batch = static_cast<int64_t>(rows_.size());
    if (dtype_ == uint8) {
      out.values = bytes_tensor(bytes_);
      out.value_lengths = Tensor::from_vector(lengths_);
      out.row_lengths = Tensor::from_vector(rows_);
      return out;
    }
    if (fixed) {
      std::vector<int64_t> dims = fixed->shape.dims();
      if (!single) dims.insert(dims.begin(), batch);
      out.values = dtype_ == int64 ? Tensor::from_vector(ints_, Shape(dims))
                                   : Tensor::from_vector(floats_, Shape(dims));
      return out;
    }
    out.values = dtype_ == int64 ? Tensor::from_vector(ints_) : Tensor::from_vector(floats_);
    out.row_lengths = Tensor::from_vector(rows_);
    return out;
  }

 private:
  void check_default(const FixedLenFeature& f) const {
    if (f.shape.numel() < 0 || std::any_of(f.shape.begin(), f.shape.end(),
                                           [](int64_t d) { return d < 0; })) {
      throw ValueError("parse_example: feature '" + name_ + "': FixedLenFeature shape " +
                       f.shape.to_string() + " has a negative dimension");
    }
    if (!f.default_value) return;
    const Tensor& d = *f.default_value;
    const int64_t n = f.shape.numel();
    if (!d.defined()) {
      throw ValueError("parse_example: feature '" + name_ + "': default_value is undefined");
    }
    if (dtype_ == uint8) {
      if (d.dtype() != uint8 || d.rank() != 1 || n != 1) {
        throw ValueError("parse_example: feature '" + name_ + "': a bytes default_value is one "
                         "string, a 1-D uint8 tensor, for a FixedLenFeature of one value; found " +
                         std::string(dtype_name(d.dtype())) + " " + d.shape().to_string() +
                         " for shape " + f.shape.to_string());
      }
      return;
    }
    if (d.numel() != n && d.numel() != 1) {
      throw ValueError("parse_example: feature '" + name_ + "': default_value has " +
                       std::to_string(d.numel()) + " elements, expected " + std::to_string(n) +
                       " (shape " + f.shape.to_string() + ") or 1");
    }
  }

  void add_default(const FixedLenFeature& f) {
    const Tensor& d = *f.default_value;
    const int64_t n = f.shape.numel();
    if (dtype_ == uint8) {
      add_string(record_bytes(d));
    } else if (dtype_ == int64) {
      const std::vector<int64_t> v = d.to_vector<int64_t>();
      for (int64_t i = 0; i < n; ++i) ints_.push_back(v[v.size() == 1 ? 0 : size_t(i)]);
    } else {
      const std::vector<float> v = d.to_vector<float>();
      for (int64_t i = 0; i < n; ++i) floats_.push_back(v[v.size() == 1 ? 0 : size_t(i)]);
    }
    rows_.push_back(n);
  }

  void add_string(const std::string& s) {
    bytes_ += s;
    lengths_.push_back(static_cast<int64_t>(s.size()));
  }

  std::string name_;
  FeatureSpec spec_;
  DType dtype_;
  std::vector<int64_t> ints_;
  std::vector<float> floats_;
  std::string bytes_;
  std::vector<int64_t> lengths_;  // per string (bytes features)
  std::vector<int64_t> rows_;     // values per record
};

ParsedFeatures parse_records(const std::vector<std::string_view>& records,
                             const FeatureSpecs& specs, bool single, const char* op) {
  std::vector<std::pair<std::string, Column>> columns;
  columns.reserve(specs.size());
  for (const auto& [name, spec] : specs) columns.emplace_back(name, Column(name, spec));
  pb::Example example;
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string_view r = records[i];
    if (r.size() > size_t{INT32_MAX} ||
        !example.ParseFromArray(r.data(), static_cast<int>(r.size()))) {
      throw ValueError(std::string(op) + ": record " + std::to_string(i) + " (" +
                       std::to_string(r.size()) + " bytes) is not a serialized tf.train.Example; "
                       "check that the file holds Examples (not SequenceExamples or raw data)");
    }
    for (auto& [name, column] : columns) column.add(example.features(), i, op);
  }
  ParsedFeatures out;
  for (const auto& [name, column] : columns) out.emplace(name, column.finish(single));
  return out;
}

}  // namespace

std::string ParsedFeature::string(int64_t i) const {
  if (!value_lengths.defined()) {
    throw ValueError("ParsedFeature::string: not a bytes feature (parse it with dtype uint8)");
  }
  const std::vector<int64_t> lengths = value_lengths.to_vector<int64_t>();
  if (i < 0 || i >= static_cast<int64_t>(lengths.size())) {
    throw IndexError("ParsedFeature::string: index " + std::to_string(i) + " is outside the " +
                     std::to_string(lengths.size()) + " strings");
  }
  int64_t start = 0;
  for (int64_t k = 0; k < i; ++k) start += lengths[size_t(k)];
  const std::string all = record_bytes(values);
  return all.substr(size_t(start), size_t(lengths[size_t(i)]));
}

std::vector<std::string> ParsedFeature::strings() const {
  if (!value_lengths.defined()) {
    throw ValueError("ParsedFeature::strings: not a bytes feature (parse it with dtype uint8)");
  }
  const std::string all = record_bytes(values);
  std::vector<std::string> out;
  size_t at = 0;
  for (int64_t len : value_lengths.to_vector<int64_t>()) {
    out.push_back(all.substr(at, size_t(len)));
    at += size_t(len);
  }
  return out;
}

ParsedFeatures parse_single_example(std::string_view serialized, const FeatureSpecs& features) {
  return parse_records({serialized}, features, /*single=*/true, "parse_single_example");
}

ParsedFeatures parse_single_example(const Tensor& serialized, const FeatureSpecs& features) {
  const std::string bytes = record_bytes(serialized);
  return parse_single_example(std::string_view(bytes), features);
}

ParsedFeatures parse_example(const std::vector<std::string>& batch, const FeatureSpecs& features) {
  std::vector<std::string_view> views(batch.begin(), batch.end());
  return parse_records(views, features, /*single=*/false, "parse_example");
}

}  // namespace strata::data

// Parsing tf.train.Example records (tf.io.parse_single_example / tf.io.parse_example).
//
//   data::FeatureSpecs spec = {
//       {"image/encoded", data::FixedLenFeature({}, uint8)},          // one bytes value
//       {"image/class/label", data::FixedLenFeature({}, int64, Tensor::scalar<int64_t>(-1))},
//       {"bbox", data::VarLenFeature(float32)},
//   };
//   data::ParsedFeatures f = data::parse_single_example(record, spec);
//   Tensor label = f["image/class/label"].values;                  // int64 []
//   std::string png = f["image/encoded"].string(0);
//
// dtypes: int64 (Int64List), float32 (FloatList), uint8 (BytesList: Strata tensors have no
// string dtype, so bytes are uint8, as TFRecordDataset's elements are).
//
// What a ParsedFeature holds:
//   FixedLen int64/float32  values: dense, `shape` (single) or [batch, *shape] (parse_example).
//   VarLen   int64/float32  values: 1-D, every record's values one after another;
//                           row_lengths: int64 [batch], values per record. Together they are
//                           tf.RaggedTensor.from_row_lengths(values, row_lengths).
//   bytes (uint8)           values: 1-D uint8, every string's bytes one after another;
//                           value_lengths: int64, one length per string (string(i) cuts one
//                           out); row_lengths: strings per record (FixedLen: prod(shape) each).
// Errors are ValueErrors naming the feature and the record index: a record that is not an
// Example, a FixedLen feature missing without a default, a feature of another kind than the spec
// asks, or a FixedLen feature with the wrong number of values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "framework/core/shape.h"
#include "framework/core/tensor.h"

namespace strata::data {

// A feature with the same number of values in every record: prod(shape) of them. A missing
// feature takes default_value (of prod(shape) elements, or one that is repeated; for bytes a 1-D
// uint8 tensor, one string, allowed when prod(shape) == 1); without a default it is an error.
struct FixedLenFeature {
  FixedLenFeature(Shape shape, DType dtype, std::optional<Tensor> default_value = std::nullopt)
      : shape(std::move(shape)), dtype(dtype), default_value(std::move(default_value)) {}
  Shape shape;
  DType dtype;
  std::optional<Tensor> default_value;
};

// Any number of values per record, zero when the feature is missing.
struct VarLenFeature {
  explicit VarLenFeature(DType dtype) : dtype(dtype) {}
  DType dtype;
};

using FeatureSpec = std::variant<FixedLenFeature, VarLenFeature>;
using FeatureSpecs = std::map<std::string, FeatureSpec>;

struct ParsedFeature {
  Tensor values;
  Tensor row_lengths;    // VarLen and bytes features: int64 [batch]
  Tensor value_lengths;  // bytes features: int64, the length of each string
  // Bytes features: string i (in record order), and all of them.
  std::string string(int64_t i) const;
  std::vector<std::string> strings() const;
};
using ParsedFeatures = std::map<std::string, ParsedFeature>;

// One serialized Example; row_lengths (where present) have one entry. FixedLen values have
// `shape` (no batch axis).
ParsedFeatures parse_single_example(std::string_view serialized, const FeatureSpecs& features);
// A TFRecordDataset element (1-D uint8 tensor of the record's bytes).
ParsedFeatures parse_single_example(const Tensor& serialized, const FeatureSpecs& features);
// A batch of serialized Examples; FixedLen values get a leading batch axis.
ParsedFeatures parse_example(const std::vector<std::string>& batch, const FeatureSpecs& features);

}  // namespace strata::data

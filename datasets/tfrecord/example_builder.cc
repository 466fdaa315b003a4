#include "datasets/tfrecord/example_builder.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "datasets/tfrecord/example.pb.h"  // generated from example.proto
#include "framework/core/error.h"

namespace strata::data {

ExampleBuilder& ExampleBuilder::add(const std::string& name, Feature feature) {
  if (!features_.emplace(name, std::move(feature)).second) {
    throw ValueError("ExampleBuilder: feature '" + name + "' is added twice; a tf.train.Example "
                     "holds one list per name: pass all its values in one call");
  }
  return *this;
}

ExampleBuilder& ExampleBuilder::add_int64(const std::string& name, std::vector<int64_t> values) {
  return add(name, Feature{Feature::kInt64, std::move(values), {}, {}});
}

ExampleBuilder& ExampleBuilder::add_float(const std::string& name, std::vector<float> values) {
  return add(name, Feature{Feature::kFloat, {}, std::move(values), {}});
}

ExampleBuilder& ExampleBuilder::add_bytes(const std::string& name, std::string_view value) {
  return add(name, Feature{Feature::kBytes, {}, {}, {std::string(value)}});
}

ExampleBuilder& ExampleBuilder::add_bytes(const std::string& name,
                                          std::vector<std::string> values) {
  return add(name, Feature{Feature::kBytes, {}, {}, std::move(values)});
}

std::string ExampleBuilder::serialize() const {
  ::tensorflow::Example example;
  auto& map = *example.mutable_features()->mutable_feature();
  for (const auto& [name, f] : features_) {
    ::tensorflow::Feature& out = map[name];
    switch (f.kind) {
      case Feature::kInt64:
        out.mutable_int64_list()->mutable_value()->Add(f.ints.begin(), f.ints.end());
        break;
      case Feature::kFloat:
        out.mutable_float_list()->mutable_value()->Add(f.floats.begin(), f.floats.end());
        break;
      case Feature::kBytes:
        for (const std::string& s : f.bytes) out.mutable_bytes_list()->add_value(s);
        break;
    }
  }
  // Deterministic: the same features give the same bytes (map entries in a fixed order).
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  example.SerializeToCodedStream(&coded);
  return bytes;
}

}  // namespace strata::data

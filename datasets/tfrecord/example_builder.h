// Writing tf.train.Example records (the counterpart of example_parsing.h).
//
//   TFRecordWriter w("train.tfrecord");
//   w.write(data::ExampleBuilder()
//               .add_bytes("image/encoded", png_bytes)
//               .add_int64("image/class/label", {3})
//               .add_float("bbox", {0.1f, 0.2f, 0.5f, 0.6f})
//               .serialize());
//
// Each add_* sets one feature; naming a feature twice is a ValueError (a tf.train.Features map
// has one entry per name). serialize() gives the Example's protobuf bytes, which TensorFlow's
// tf.train.Example.FromString reads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace strata::data {

class ExampleBuilder {
 public:
  ExampleBuilder& add_int64(const std::string& name, std::vector<int64_t> values);
  ExampleBuilder& add_float(const std::string& name, std::vector<float> values);
  // One bytes value (an encoded image, a string), and a list of them.
  ExampleBuilder& add_bytes(const std::string& name, std::string_view value);
  ExampleBuilder& add_bytes(const std::string& name, std::vector<std::string> values);

  std::string serialize() const;

 private:
  struct Feature {
    enum Kind { kInt64, kFloat, kBytes } kind;
    std::vector<int64_t> ints;
    std::vector<float> floats;
    std::vector<std::string> bytes;
  };
  ExampleBuilder& add(const std::string& name, Feature feature);

  std::map<std::string, Feature> features_;
};

}  // namespace strata::data

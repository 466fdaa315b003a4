// Event: one record of a TensorBoard event file as plain C++ values, and its encoding. The wire
// format is TensorFlow's Event protocol buffer (proto/event.proto); the protobuf types stay
// inside event.cc, so this header needs no protobuf to include.
//
// Scalars are written the way TF2's tf.summary.scalar writes them, which is what TensorBoard's
// scalar dashboard reads: Summary.Value{tag, metadata{plugin_data{plugin_name: "scalars"},
// data_class: DATA_CLASS_SCALAR}, tensor{dtype: DT_FLOAT, tensor_shape{}, float_val: v}}.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::summary {

// The version string of every event file's first event.
inline constexpr std::string_view kFileVersion = "brain.Event:2";

struct ScalarValue {
  std::string tag;
  double value = 0;  // stored as float32, like tf.summary.scalar
};

struct Event {
  double wall_time = 0;  // seconds since the Unix epoch
  int64_t step = 0;
  std::string file_version;          // set (only) on a file's first event
  std::vector<ScalarValue> scalars;  // the summary's scalar values, in order
};

// Seconds since the Unix epoch, with microseconds (an Event's wall_time).
double wall_time_now();

// The serialized Event protocol buffer: file_version when set, else a summary of the scalars.
std::string encode_event(const Event& event);
// Parses a serialized Event. Scalars are read from TF2 tensors (DT_FLOAT or DT_DOUBLE, one value)
// and from TF1's simple_value; other summary values (histograms, images, ...) are skipped.
// ValueError when the bytes are not an Event.
Event decode_event(std::string_view bytes);

}  // namespace strata::summary

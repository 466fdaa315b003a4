// The TensorBoard event file reader: TFRecord framing (lengths and masked CRC32Cs) and the Event
// protocol buffers inside, through summary::read_events on the input as a file.
#include <cstdint>
#include <string>

#include "framework/core/error.h"
#include "framework/summary/event.h"
#include "framework/summary/event_file_reader.h"
#include "framework/summary/proto/event.pb.h"  // generated; for seeds in TF1's and TF's other forms
#include "framework/summary/record_writer.h"
#include "fuzz/fuzz_support.h"

namespace strata::fuzz {
namespace {

namespace pb = ::strata::tfevents;

std::string framed(const std::string& event) { return TFRecordWriter::encode(event); }

// A scalar in each form the reader accepts besides Strata's own: TF1's simple_value, a double,
// and a float in tensor_content.
std::string other_forms() {
  pb::Event e;
  e.set_step(7);
  e.set_wall_time(1.5e9);
  pb::Summary* s = e.mutable_summary();
  pb::Summary::Value* v1 = s->add_value();
  v1->set_tag("tf1");
  v1->set_simple_value(0.25f);
  pb::Summary::Value* v2 = s->add_value();
  v2->set_tag("double");
  v2->mutable_tensor()->set_dtype(pb::DT_DOUBLE);
  v2->mutable_tensor()->add_double_val(2.5);
  pb::Summary::Value* v3 = s->add_value();
  v3->set_tag("content");
  v3->mutable_tensor()->set_dtype(pb::DT_FLOAT);
  const float f = 3.5f;
  v3->mutable_tensor()->set_tensor_content(std::string(reinterpret_cast<const char*>(&f), 4));
  pb::Summary::Value* v4 = s->add_value();
  v4->set_tag("histogram");  // not a scalar: skipped
  v4->mutable_tensor()->set_dtype(pb::DT_FLOAT);
  v4->mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(2);
  return e.SerializeAsString();
}

}  // namespace

void write_seeds(const std::string& dir) {
  summary::Event version;
  version.wall_time = 1.7e9;
  version.file_version = std::string(summary::kFileVersion);
  summary::Event scalars;
  scalars.wall_time = 1.7e9 + 1;
  scalars.step = 3;
  scalars.scalars = {{"loss", 0.5}, {"accuracy", 0.875}};
  const std::string first = framed(summary::encode_event(version));
  write_seed(dir, "version_only.tfevents", first);
  write_seed(dir, "scalars.tfevents", first + framed(summary::encode_event(scalars)));
  write_seed(dir, "other_forms.tfevents", first + framed(other_forms()));
  write_seed(dir, "empty_record.tfevents", framed(""));
}

}  // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = strata::fuzz::scratch_file(data, size);
  try {
    for (const strata::summary::Event& e : strata::summary::read_events(path)) {
      (void)e.scalars.size();
    }
  } catch (const strata::Error&) {
  }
  return 0;
}

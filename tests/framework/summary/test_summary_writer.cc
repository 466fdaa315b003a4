#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <ctime>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "datasets/temp_dir.h"
#include "framework/core/error.h"
#include "framework/summary/event.h"
#include "framework/summary/event_file_reader.h"
#include "framework/summary/record_reader.h"
#include "framework/summary/summary_writer.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;
using testing::TempDir;

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  }
  return out;
}

TEST(SummaryWriter, FileNameAndFirstRecord) {
  TempDir dir;
  const double before = static_cast<double>(std::time(nullptr));
  auto writer = summary::create_file_writer((dir.path() / "run").string());
  const auto files = summary::list_event_files((dir.path() / "run").string());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], writer->path());

  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  const std::string name = std::filesystem::path(files[0]).filename().string();
  const std::regex pattern(R"(events\.out\.tfevents\.(\d{10})\.(.+)\.(\d+)\.(\d+)\.v2)");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(name, m, pattern)) << name;
  EXPECT_NEAR(std::stod(m[1].str()), before, 5);
  EXPECT_EQ(m[2].str(), host);
  EXPECT_EQ(m[3].str(), std::to_string(getpid()));

  // Written and flushed before anything else is.
  const auto events = summary::read_events(files[0]);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_NEAR(events[0].wall_time, before, 5);
  EXPECT_TRUE(events[0].scalars.empty());

  // A second writer of the same directory gets a file of its own.
  auto second = summary::create_file_writer((dir.path() / "run").string());
  EXPECT_NE(second->path(), writer->path());
  EXPECT_EQ(summary::list_event_files((dir.path() / "run").string()).size(), 2u);
}

TEST(SummaryWriter, ScalarsRoundTrip) {
  TempDir dir;
  summary::SummaryWriter writer(dir.path().string(), summary::SummaryWriterOptions().max_queue(1000));
  writer.scalar("loss", 0.75, 0);
  writer.scalar("loss", 0.5, 1);
  writer.scalar("accuracy", 1.0 / 3.0, 1);
  writer.scalar("big/step", -2.5e10, int64_t{1} << 40);
  EXPECT_EQ(summary::read_events(writer.path()).size(), 1u);  // queued, not flushed yet
  writer.flush();
  auto events = summary::read_events(writer.path());
  ASSERT_EQ(events.size(), 5u);
  const std::vector<std::tuple<std::string, double, int64_t>> expected = {
      {"loss", 0.75, 0}, {"loss", 0.5, 1}, {"accuracy", 1.0 / 3.0, 1},
      {"big/step", -2.5e10, int64_t{1} << 40}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const summary::Event& e = events[i + 1];
    ASSERT_EQ(e.scalars.size(), 1u);
    EXPECT_TRUE(e.file_version.empty());
    EXPECT_EQ(e.scalars[0].tag, std::get<0>(expected[i]));
    EXPECT_EQ(e.scalars[0].value, static_cast<float>(std::get<1>(expected[i])));  // float32
    EXPECT_EQ(e.step, std::get<2>(expected[i]));
    EXPECT_GE(e.wall_time, events[0].wall_time);
  }
  writer.close();
  writer.close();
  expect_error<StateError>([&] { writer.scalar("loss", 1, 2); }, {"after close"});
}

TEST(SummaryWriter, QueueFlushesItself) {
  TempDir dir;
  summary::SummaryWriter writer(dir.path().string(), summary::SummaryWriterOptions().max_queue(2));
  writer.scalar("a", 1, 0);
  writer.scalar("a", 2, 1);
  EXPECT_EQ(summary::read_events(writer.path()).size(), 1u);
  writer.scalar("a", 3, 2);  // more than max_queue waiting: all three are flushed
  EXPECT_EQ(summary::read_events(writer.path()).size(), 4u);
  summary::SummaryWriter timed((dir.path() / "t").string(),
                               summary::SummaryWriterOptions().flush_millis(0));
  timed.scalar("a", 1, 0);
  EXPECT_EQ(summary::read_events(timed.path()).size(), 2u);
}

// The exact bytes pin every field number to TensorFlow's (event.proto, summary.proto,
// tensor.proto, tensor_shape.proto, types.proto), in the TF2 form tf.summary.scalar writes.
TEST(SummaryWriter, ScalarEventWireFormat) {
  summary::Event e;
  e.wall_time = 1.5;
  e.step = 2;
  e.scalars.push_back({"a", 0.5});
  const std::string want =
      std::string("09000000000000f83f")  // Event.wall_time (1, double) = 1.5
      + "1002"                           // Event.step (2, int64) = 2
      + "2a20"                           // Event.summary (5)
      + "0a1e"                           //   Summary.value (1)
      + "0a0161"                         //     Value.tag (1) = "a"
      + "420a"                           //     Value.tensor (8)
      + "0801"                           //       TensorProto.dtype (1) = DT_FLOAT (1)
      + "1200"                           //       TensorProto.tensor_shape (2) = {}: a scalar
      + "2a040000003f"                   //       TensorProto.float_val (5, packed) = 0.5f
      + "4a0d"                           //     Value.metadata (9)
      + "0a09" + "0a07" + hex("scalars")  //       plugin_data (1) { plugin_name (1) }
      + "2001";                          //       data_class (4) = DATA_CLASS_SCALAR (1)
  EXPECT_EQ(hex(summary::encode_event(e)), want);

  summary::Event version;
  version.wall_time = 1.5;
  version.file_version = "brain.Event:2";
  EXPECT_EQ(hex(summary::encode_event(version)),
            std::string("09000000000000f83f") + "1a0d" + hex("brain.Event:2"));  // file_version (3)
}

// Scalars written by other tools: TF1's simple_value and TF2 tensors of float64 in
// tensor_content.
TEST(SummaryWriter, DecodesOtherScalarForms) {
  // Event{step: 7, summary {value {tag: "x", simple_value: 2.0}}}
  summary::Event e = summary::decode_event(unhex("1007" "2a0a" "0a08" "0a0178" "1500000040"));
  EXPECT_EQ(e.step, 7);
  ASSERT_EQ(e.scalars.size(), 1u);
  EXPECT_EQ(e.scalars[0].tag, "x");
  EXPECT_EQ(e.scalars[0].value, 2.0);
  // Event{summary {value {tag: "y", tensor {dtype: DT_DOUBLE, tensor_shape {},
  //                                         tensor_content: 0.1 (8 bytes)}}}}
  e = summary::decode_event(unhex("2a15" "0a13" "0a0179" "420e" "0802" "1200" "2208"
                                  "9a9999999999b93f"));
  ASSERT_EQ(e.scalars.size(), 1u);
  EXPECT_EQ(e.scalars[0].value, 0.1);
  expect_error<ValueError>([&] { summary::decode_event(std::string("\xff\xff\xff", 3)); },
                           {"not a TensorFlow Event"});
}

TEST(SummaryWriter, UnwritableLogDir) {
  TempDir dir;
  const std::string file = dir.file("plain_file");
  std::ofstream(file) << "x";
  expect_error<IOError>([&] { summary::create_file_writer(file + "/logs"); },
                        {"plain_file/logs", "log directory", "log_dir"});
  expect_error<ValueError>(
      [&] { summary::SummaryWriter w(dir.path().string(), summary::SummaryWriterOptions().max_queue(-1)); },
      {"max_queue"});
}

}  // namespace
}  // namespace strata

// TFRecord files (plain, GZIP and ZLIB) through TFRecordReader, and each record through
// parse_single_example. The first input byte picks the compression (low two bits) and
// skip_corrupt (bit 2); the rest is the file.
#include <cstdint>
#include <cstdio>
#include <string>

#include "datasets/tfrecord/example_builder.h"
#include "datasets/tfrecord/example_parsing.h"
#include "framework/core/error.h"
#include "framework/summary/record_reader.h"
#include "framework/summary/record_writer.h"
#include "fuzz/fuzz_support.h"

namespace strata::fuzz {
namespace {

const char* const kCompressions[] = {"", "GZIP", "ZLIB", ""};

std::string records_file(const std::string& dir, const char* compression) {
  const std::string path = dir + "/.tmp_tfrecord";
  {
    TFRecordWriter w(path, compression);
    w.write(data::ExampleBuilder()
                .add_int64("label", {3})
                .add_float("bbox", {0.1f, 0.2f})
                .add_bytes("image", std::string("\x89PNG", 4))
                .serialize());
    w.write("not an example");
    w.write("");
  }
  std::string bytes;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
    std::fclose(f);
  }
  std::remove(path.c_str());
  return bytes;
}

}  // namespace

void write_seeds(const std::string& dir) {
  write_seed(dir, "plain", std::string(1, '\0') + records_file(dir, ""));
  write_seed(dir, "gzip", std::string(1, '\1') + records_file(dir, "GZIP"));
  write_seed(dir, "zlib", std::string(1, '\2') + records_file(dir, "ZLIB"));
  write_seed(dir, "gzip_skip", std::string(1, '\5') + records_file(dir, "GZIP"));
}

}  // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string& path = strata::fuzz::scratch_file(data + 1, size - 1);
  const strata::data::FeatureSpecs spec = {
      {"label", strata::data::FixedLenFeature({}, strata::int64, strata::Tensor::scalar<int64_t>(0))},
      {"bbox", strata::data::VarLenFeature(strata::float32)},
      {"image", strata::data::FixedLenFeature({}, strata::uint8)},
  };
  try {
    strata::TFRecordReader reader(path, strata::TFRecordOptions()
                                            .compression(strata::fuzz::kCompressions[data[0] & 3])
                                            .skip_corrupt((data[0] & 4) != 0)
                                            .buffer_size(1 + data[0] / 8)
                                            .max_record_bytes(1 << 20));
    while (auto record = reader.read()) {
      try {
        (void)strata::data::parse_single_example(*record, spec);
      } catch (const strata::Error&) {
      }
    }
  } catch (const strata::Error&) {
  }
  return 0;
}

// TFRecord files as a Dataset (tf.data.TFRecordDataset).
//
//   auto ds = data::TFRecordDataset({"train-0.tfrecord.gz", "train-1.tfrecord.gz"}, "GZIP")
//                 .map([](const data::Element& e) { ... parse_single_example(e[0], spec) ... });
//
// Each element is one record: a single component, a 1-D uint8 tensor holding the record's bytes
// (Strata tensors have no string dtype; record_bytes() turns it back into a std::string). Files
// are read one after another, in the order given, each through TFRecordReader
// (framework/summary/record_reader.h), so the framing, CRC checks and errors are TensorFlow's:
// a corrupt record is a ValueError naming the file and the record's offset, unless the options
// say skip_corrupt, in which case it is skipped and counted in the options' counter:
//
//   data::TFRecordDatasetOptions opts;
//   opts.reader.compression("ZLIB").skip_corrupt(true);
//   auto ds = data::TFRecordDataset(files, opts);
//   ... iterate ...
//   opts.corrupt_records();  // records skipped so far, over every pass and every copy of ds
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/data/bytes_tensor.h"  // record_bytes(), bytes_tensor()
#include "framework/data/dataset.h"
#include "framework/summary/record_reader.h"

namespace strata::data {

struct TFRecordDatasetOptions {
  TFRecordOptions reader;
  // Shared by every copy of these options and of the datasets made with them.
  std::shared_ptr<std::atomic<int64_t>> corrupt_counter = std::make_shared<std::atomic<int64_t>>(0);
  int64_t corrupt_records() const { return corrupt_counter->load(); }
};

// compression: "" / "GZIP" / "ZLIB"; buffer_size: bytes read from a file at a time (0 = 256 KiB).
Dataset TFRecordDataset(const std::vector<std::string>& filenames,
                        const std::string& compression = "", int64_t buffer_size = 0);
Dataset TFRecordDataset(const std::vector<std::string>& filenames,
                        const TFRecordDatasetOptions& options);

}  // namespace strata::data

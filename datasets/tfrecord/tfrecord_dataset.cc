#include "datasets/tfrecord/tfrecord_dataset.h"

#include "framework/core/error.h"
#include "framework/data/dataset_ops.h"

namespace strata::data {
namespace {

// A pass reads the files in order, one reader open at a time.
class TFRecordIterator : public Iterator {
 public:
  TFRecordIterator(std::vector<std::string> files, TFRecordDatasetOptions options)
      : files_(std::move(files)), options_(std::move(options)) {}

  std::optional<Element> next() override {
    for (;;) {
      if (!reader_) {
        if (next_file_ >= files_.size()) return std::nullopt;
        reader_ = std::make_unique<TFRecordReader>(files_[next_file_++], options_.reader);
      }
      const int64_t before = reader_->corrupt_records();
      std::optional<std::string> record = reader_->read();
      *options_.corrupt_counter += reader_->corrupt_records() - before;
      if (record) return Element{bytes_tensor(*record)};
      reader_.reset();
    }
  }

 private:
  std::vector<std::string> files_;
  TFRecordDatasetOptions options_;
  size_t next_file_ = 0;
  std::unique_ptr<TFRecordReader> reader_;
};

class TFRecordDatasetImpl : public DatasetImpl {
 public:
  TFRecordDatasetImpl(std::vector<std::string> files, TFRecordDatasetOptions options)
      : files_(std::move(files)), options_(std::move(options)) {}
  std::unique_ptr<Iterator> make_iterator() const override {
    return std::make_unique<TFRecordIterator>(files_, options_);
  }
  // Counting would mean reading every file (TensorFlow reports UNKNOWN too).
  int64_t cardinality() const override { return kUnknownCardinality; }
  const std::vector<std::string>* source_files() const override { return &files_; }
  ImplPtr with_files(std::vector<std::string> files) const override {
    return std::make_shared<TFRecordDatasetImpl>(std::move(files), options_);
  }

 private:
  std::vector<std::string> files_;
  TFRecordDatasetOptions options_;
};

}  // namespace

Dataset TFRecordDataset(const std::vector<std::string>& filenames, const std::string& compression,
                        int64_t buffer_size) {
  TFRecordDatasetOptions options;
  options.reader.compression(compression).buffer_size(buffer_size);
  return TFRecordDataset(filenames, options);
}

Dataset TFRecordDataset(const std::vector<std::string>& filenames,
                        const TFRecordDatasetOptions& options) {
  if (!options.corrupt_counter) {
    throw ValueError("TFRecordDataset: options.corrupt_counter is null; keep the default counter");
  }
  return Dataset(std::make_shared<TFRecordDatasetImpl>(filenames, options));
}

}  // namespace strata::data

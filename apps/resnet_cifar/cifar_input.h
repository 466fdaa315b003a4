// CIFAR-10 input pipelines of TensorFlow's official cifar_preprocessing.py, on strata::data:
//   train: from_tensor_slices -> shuffle(50000) -> map(pad 4 + random 32x32 crop + random
//          horizontal flip + per-image standardization, parallel) -> batch(drop_remainder)
//          -> prefetch
//   eval:  from_tensor_slices -> map(per-image standardization, parallel) -> batch -> prefetch
//   synthetic: one batch of random images and labels, repeated forever (official
//          get_synth_input_fn), for --use_synthetic_data.
// Elements are (x float32 [32,32,3], y uint8 [1]); batches (x [B,32,32,3], y [B,1]).
//   TFRecords (--data_format tfrecord, files of datasets/tools/strata_cifar10_to_tfrecord):
//          list_files(train-*, shuffled) -> interleave(TFRecordDataset, 4 files at a time, read
//          ahead) -> shuffle(10000 records) -> map(parse the Example + decode_png + the
//          training augmentation, parallel) -> batch -> prefetch; eval: the validation-* files in
//          order, decoded and standardized. Under multi_worker_mirrored each worker reads only
//          its own files (AutoShardPolicy::kAuto divides a dataset of files by file).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <strata/strata.h>

namespace resnet_cifar {

inline constexpr int64_t kHeight = 32, kWidth = 32, kChannels = 3;
inline constexpr int64_t kNumTrainImages = 50000, kNumEvalImages = 10000;
inline constexpr int64_t kNumClasses = 10;
inline constexpr int64_t kPadding = 4;  // resize_with_crop_or_pad to 36x36, then a 32x32 crop

// tf.image.per_image_standardization of one HWC image of n values:
// (x - mean) / max(stddev, 1 / sqrt(n)).
void per_image_standardization(const float* in, float* out, int64_t n);

// The training pipeline; `seed` fixes the shuffle order (augmentations draw from per-thread
// generators seeded from it).
strata::data::Dataset train_dataset(const strata::Tensor& x, const strata::Tensor& y,
                                    int64_t batch_size, uint64_t seed);
// The evaluation pipeline: every image once, in order (the last batch may be smaller).
strata::data::Dataset eval_dataset(const strata::Tensor& x, const strata::Tensor& y,
                                   int64_t batch_size);
// The TFRecord files of `split` ("train" or "validation") in `dir`: <split>-* (sorted). ValueError
// naming the folder and the converter when there are none.
std::vector<std::string> record_files(const std::string& dir, const std::string& split);
// Records in `files` (reads their framing once).
int64_t count_records(const std::vector<std::string>& files);
// The pipelines above over the Examples of `dir` (image/encoded PNG, image/class/label).
strata::data::Dataset train_records(const std::string& dir, int64_t batch_size, uint64_t seed);
strata::data::Dataset eval_records(const std::string& dir, int64_t batch_size);

// One batch of truncated_normal(mean 127, stddev 60) images and uniform labels, repeated
// forever (cardinality infinite: pass steps to fit/evaluate).
strata::data::Dataset synthetic_dataset(int64_t batch_size, uint64_t seed);

}  // namespace resnet_cifar

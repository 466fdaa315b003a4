#include "apps/resnet_cifar/cifar_input.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <vector>

namespace resnet_cifar {

using namespace strata;

void per_image_standardization(const float* in, float* out, int64_t n) {
  double sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    sum += in[i];
    sum_sq += double(in[i]) * in[i];
  }
  const double mean = sum / double(n);
  const double variance = std::max(0.0, sum_sq / double(n) - mean * mean);
  const double stddev = std::max(std::sqrt(variance), 1.0 / std::sqrt(double(n)));
  const float m = float(mean), inv = float(1.0 / stddev);
  for (int64_t i = 0; i < n; ++i) out[i] = (in[i] - m) * inv;
}

namespace {

constexpr int64_t kImageValues = kHeight * kWidth * kChannels;

// Checks x uint8 [N,32,32,3] and y [N,1] (or [N]).
void check_images(const Tensor& x, const Tensor& y, const char* what) {
  if (x.dtype() != uint8 || x.rank() != 4 || x.dim(1) != kHeight || x.dim(2) != kWidth ||
      x.dim(3) != kChannels) {
    throw ValueError(std::string(what) + ": expected uint8 images [N,32,32,3], got " +
                     dtype_name(x.dtype()) + " " + x.shape().to_string());
  }
  if (y.dim(0) != x.dim(0)) {
    throw ValueError(std::string(what) + ": " + std::to_string(x.dim(0)) + " images but " +
                     std::to_string(y.dim(0)) + " labels");
  }
}

// A per-thread generator for the augmentations: parallel map workers each get their own
// stream, derived from the pipeline's seed and a process-wide counter.
std::mt19937_64& augment_rng(uint64_t seed) {
  static std::atomic<uint64_t> streams{0};
  thread_local uint64_t owner_seed = ~uint64_t(0);
  thread_local std::mt19937_64 rng;
  if (owner_seed != seed) {
    owner_seed = seed;
    std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), uint32_t(streams.fetch_add(1))};
    rng.seed(seq);
  }
  return rng;
}

// Pad 4 zeros on each side, take a random 32x32 window, flip it left-right with probability
// 1/2, then standardize: what cifar_preprocessing.preprocess_image does for training.
data::Element augment(const data::Element& e, uint64_t seed) {
  const uint8_t* src = e[0].data<uint8_t>();
  std::mt19937_64& rng = augment_rng(seed);
  std::uniform_int_distribution<int> offset(0, int(2 * kPadding));
  const int64_t dy = offset(rng) - kPadding, dx = offset(rng) - kPadding;
  const bool flip = (rng() >> 63) != 0;
  float crop[kImageValues];
  for (int64_t r = 0; r < kHeight; ++r) {
    const int64_t sr = r + dy;
    for (int64_t c = 0; c < kWidth; ++c) {
      const int64_t sc = (flip ? kWidth - 1 - c : c) + dx;
      float* dst = crop + (r * kWidth + c) * kChannels;
      if (sr < 0 || sr >= kHeight || sc < 0 || sc >= kWidth) {
        for (int64_t ch = 0; ch < kChannels; ++ch) dst[ch] = 0.0f;
      } else {
        const uint8_t* p = src + (sr * kWidth + sc) * kChannels;
        for (int64_t ch = 0; ch < kChannels; ++ch) dst[ch] = float(p[ch]);
      }
    }
  }
  Tensor out = Tensor::empty({kHeight, kWidth, kChannels}, float32);
  per_image_standardization(crop, out.data<float>(), kImageValues);
  return {out, e[1]};
}

// A record's Example as (uint8 image [32,32,3], uint8 label [1]), the element of the tensor
// pipelines.
data::Element parse_record(const data::Element& record) {
  static const data::FeatureSpecs spec = {
      {"image/encoded", data::FixedLenFeature({}, uint8)},
      {"image/class/label", data::FixedLenFeature({}, int64)}};
  data::ParsedFeatures f = data::parse_single_example(record[0], spec);
  // A one-string bytes feature's values are that string's bytes: decoded where they are.
  const Tensor image = data::decode_png(f["image/encoded"].values, 3);
  if (image.dim(0) != kHeight || image.dim(1) != kWidth) {
    throw ValueError("CIFAR-10 record: expected a 32x32 image, got " + image.shape().to_string() +
                     "; write the records with strata_cifar10_to_tfrecord");
  }
  const int64_t label = f["image/class/label"].values.item<int64_t>();
  if (label < 0 || label >= kNumClasses) {
    throw ValueError("CIFAR-10 record: image/class/label " + std::to_string(label) +
                     " is not a class in [0, 10)");
  }
  return {image, Tensor::from_vector(std::vector<uint8_t>{uint8_t(label)}, {1})};
}

data::Element standardize(const data::Element& e) {
  const uint8_t* src = e[0].data<uint8_t>();
  float image[kImageValues];
  for (int64_t i = 0; i < kImageValues; ++i) image[i] = float(src[i]);
  Tensor out = Tensor::empty({kHeight, kWidth, kChannels}, float32);
  per_image_standardization(image, out.data<float>(), kImageValues);
  return {out, e[1]};
}

}  // namespace

data::Dataset train_dataset(const Tensor& x, const Tensor& y, int64_t batch_size,
                            uint64_t seed) {
  check_images(x, y, "train_dataset");
  return data::Dataset::from_tensor_slices({x, y})
      .shuffle(x.dim(0), int64_t(seed & 0x7fffffffffffffffULL))
      .map([seed](const data::Element& e) { return augment(e, seed); }, data::kAutotune)
      .batch(batch_size, /*drop_remainder=*/true)
      .prefetch(2);
}

data::Dataset eval_dataset(const Tensor& x, const Tensor& y, int64_t batch_size) {
  check_images(x, y, "eval_dataset");
  return data::Dataset::from_tensor_slices({x, y})
      .map(standardize, data::kAutotune)
      .batch(batch_size, /*drop_remainder=*/false)
      .prefetch(2);
}

namespace {

// list_files over <split>-* in `dir`; ValueError naming the converter when nothing matches.
data::Dataset listed_records(const std::string& dir, const std::string& split, bool shuffle,
                             uint64_t seed) {
  const std::string pattern = dir + "/" + split + "-*";
  try {
    return data::Dataset::list_files(pattern, shuffle, int64_t(seed & 0x7fffffffffffffffULL));
  } catch (const ValueError&) {
    throw ValueError("--data_format tfrecord: no " + split + " files (" + pattern + ") in " +
                     "--data_dir " + dir + "; write them with strata_cifar10_to_tfrecord "
                     "--output_dir " + dir);
  }
}

// The records of <split>-*, 4 files at a time (read ahead) when shuffled, else in file order.
data::Dataset read_records(const std::string& dir, const std::string& split, bool shuffle,
                           uint64_t seed) {
  return listed_records(dir, split, shuffle, seed)
      .interleave([](const data::Element& f) {
                    return data::TFRecordDataset({data::record_bytes(f[0])});
                  },
                  /*cycle_length=*/shuffle ? 4 : 1, /*block_length=*/1,
                  /*num_parallel_calls=*/shuffle ? data::kAutotune : 1);
}

}  // namespace

std::vector<std::string> record_files(const std::string& dir, const std::string& split) {
  std::vector<std::string> files;
  auto it = listed_records(dir, split, /*shuffle=*/false, 0).make_iterator();
  while (auto e = it->next()) files.push_back(data::record_bytes((*e)[0]));
  return files;
}

int64_t count_records(const std::vector<std::string>& files) {
  int64_t n = 0;
  auto it = data::TFRecordDataset(files).make_iterator();
  while (it->next()) ++n;
  return n;
}

data::Dataset train_records(const std::string& dir, int64_t batch_size, uint64_t seed) {
  return read_records(dir, "train", /*shuffle=*/true, seed)
      .shuffle(10000, int64_t((seed + 1) & 0x7fffffffffffffffULL))
      .map([seed](const data::Element& r) { return augment(parse_record(r), seed); },
           data::kAutotune)
      .batch(batch_size, /*drop_remainder=*/true)
      .prefetch(2);
}

data::Dataset eval_records(const std::string& dir, int64_t batch_size) {
  return read_records(dir, "validation", /*shuffle=*/false, 0)
      .map([](const data::Element& r) { return standardize(parse_record(r)); }, data::kAutotune)
      .batch(batch_size, /*drop_remainder=*/false)
      .prefetch(2);
}

data::Dataset synthetic_dataset(int64_t batch_size, uint64_t seed) {
  const Tensor images =
      truncated_normal({batch_size, kHeight, kWidth, kChannels}, 127.0, 60.0, float32,
                       int64_t(seed & 0x7fffffffULL));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> label(0, int(kNumClasses) - 1);
  std::vector<uint8_t> labels(static_cast<size_t>(batch_size));
  for (auto& l : labels) l = uint8_t(label(rng));
  const Tensor y = Tensor::from_vector(labels, {batch_size, 1});
  return data::Dataset::from_tensors({images, y}).repeat();
}

}  // namespace resnet_cifar

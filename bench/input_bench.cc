// strata_input_bench: images/s of a CIFAR-10 training input pipeline over TFRecord files of PNGs
// (written by strata_cifar10_to_tfrecord), the figure bench/input_compare.sh sets beside
// PyTorch's DataLoader over the same images as PNG files.
//
//   strata_input_bench --data_dir DIR [--threads 1] [--map element|per_file] [--batch 128]
//                      [--images 10240] [--warmup 5] [--compression ""|GZIP|ZLIB] [--seed 1]
//
// --map element (the default) is TensorFlow's usual pipeline for CIFAR-10 (official resnet's
// cifar_preprocessing):
//   list_files(train-*.tfrecord) -> interleave(TFRecordDataset) -> shuffle(10000) -> repeat
//   -> map(decode) -> batch(128, drop_remainder) -> prefetch(2)
// where decode is parse_single_example, decode_png, pad 4 + random 32x32 crop, random
// left-right flip and scaling to [0,1] float32: what torchvision's RandomCrop(32, padding=4),
// RandomHorizontalFlip and ToTensor do (ToTensor also makes the layout CHW; Keras models take
// HWC, so this keeps HWC). --threads N: the map's num_parallel_calls and the interleave's
// cycle length and parallelism; with 1 the map runs on prefetch's thread, as DataLoader's
// num_workers=1 runs it in its one worker.
// --map per_file moves the shuffle and the map into the interleave: each of N open files is
// shuffled (whole: 5000 records) and decoded on the interleave's thread for it, 16 images at a
// time, then batched. Same work, fewer hand-offs between threads.
// Timing starts after --warmup batches (the shuffle buffers fill then) and covers --images
// images, rounded up to whole batches.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

#include "datasets/image_coding.h"
#include "datasets/tfrecord/example_parsing.h"
#include "datasets/tfrecord/tfrecord_dataset.h"
#include "framework/core/error.h"
#include "framework/data/dataset.h"

namespace {

using namespace strata;
using Clock = std::chrono::steady_clock;

constexpr int64_t kSize = 32, kChannels = 3, kPadding = 4;

struct Args {
  std::string data_dir, compression;
  std::string map = "element";
  int threads = 1;
  int64_t batch = 128, images = 10240, warmup = 5, seed = 1;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw ValueError("strata_input_bench: " + flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--data_dir") a.data_dir = value;
    else if (flag == "--compression") a.compression = value;
    else if (flag == "--threads") a.threads = std::stoi(value);
    else if (flag == "--batch") a.batch = std::stoll(value);
    else if (flag == "--images") a.images = std::stoll(value);
    else if (flag == "--warmup") a.warmup = std::stoll(value);
    else if (flag == "--seed") a.seed = std::stoll(value);
    else if (flag == "--map") a.map = value;
    else throw ValueError("strata_input_bench: unknown flag " + flag);
  }
  if (a.data_dir.empty()) {
    throw ValueError("usage: strata_input_bench --data_dir DIR (train-*.tfrecord from "
                     "strata_cifar10_to_tfrecord) [--threads N] [--map element|per_file] "
                     "[--batch B] [--images N] "
                     "[--warmup batches] [--compression GZIP|ZLIB] [--seed S]");
  }
  if (a.map != "element" && a.map != "per_file") {
    throw ValueError("strata_input_bench: --map must be element or per_file, got " + a.map);
  }
  if (a.threads < 1 || a.batch < 1 || a.images < 1 || a.warmup < 0) {
    throw ValueError("strata_input_bench: --threads, --batch and --images must be >= 1, "
                     "--warmup >= 0");
  }
  return a;
}

// A generator per map thread, its stream drawn from the seed and a process-wide counter.
std::mt19937_64& thread_rng(int64_t seed) {
  static std::atomic<uint64_t> streams{0};
  thread_local std::mt19937_64 rng = [seed] {
    std::seed_seq seq{uint32_t(seed), uint32_t(streams.fetch_add(1))};
    return std::mt19937_64(seq);
  }();
  return rng;
}

// Pad 4 zeros on each side, take a random 32x32 window, flip it left-right with probability 1/2
// and scale to [0,1]: one pass over the output, reading the source pixel each one comes from.
Tensor augment(const Tensor& image, int64_t seed) {
  if (image.shape() != Shape{kSize, kSize, kChannels}) {
    throw ShapeError("strata_input_bench: expected 32x32 RGB images, got " +
                     image.shape().to_string());
  }
  std::mt19937_64& rng = thread_rng(seed);
  std::uniform_int_distribution<int> offset(0, int(2 * kPadding));
  const int64_t dy = offset(rng) - kPadding, dx = offset(rng) - kPadding;
  const bool flip = (rng() >> 63) != 0;
  const uint8_t* src = image.data<uint8_t>();
  Tensor out = Tensor::empty({kSize, kSize, kChannels}, float32);
  float* dst = out.data<float>();
  for (int64_t r = 0; r < kSize; ++r) {
    const int64_t sr = r + dy;
    for (int64_t c = 0; c < kSize; ++c, dst += kChannels) {
      const int64_t sc = (flip ? kSize - 1 - c : c) + dx;
      if (sr < 0 || sr >= kSize || sc < 0 || sc >= kSize) {
        for (int64_t ch = 0; ch < kChannels; ++ch) dst[ch] = 0.0f;
      } else {
        const uint8_t* p = src + (sr * kSize + sc) * kChannels;
        for (int64_t ch = 0; ch < kChannels; ++ch) dst[ch] = float(p[ch]) * (1.0f / 255.0f);
      }
    }
  }
  return out;
}

data::Dataset pipeline(const Args& a) {
  const data::FeatureSpecs spec = {
      {"image/encoded", data::FixedLenFeature({}, uint8)},
      {"image/class/label", data::FixedLenFeature({}, int64)}};
  const int parallel = a.threads;
  const std::string compression = a.compression;
  const int64_t seed = a.seed;
  const data::MapFn decode = [spec, seed](const data::Element& e) {
    data::ParsedFeatures f = data::parse_single_example(e[0], spec);
    const Tensor image = data::decode_png(f["image/encoded"].values, 3);
    return data::Element{augment(image, seed), f["image/class/label"].values};
  };
  const auto files = data::Dataset::list_files(a.data_dir + "/train-*.tfrecord", true, seed);
  if (a.map == "per_file") {
    // Each open file is shuffled and decoded by the interleave's thread for it, handing over
    // blocks of 16 images: far fewer hand-offs between threads than one per image.
    return files
        .interleave(
            [compression, decode, seed](const data::Element& f) {
              return data::TFRecordDataset({data::record_bytes(f[0])}, compression)
                  .shuffle(5000, seed)
                  .map(decode);
            },
            /*cycle_length=*/parallel, /*block_length=*/16, /*num_parallel_calls=*/parallel)
        .repeat()
        .batch(a.batch, /*drop_remainder=*/true)
        .prefetch(2);
  }
  return files
      .interleave(
          [compression](const data::Element& f) {
            return data::TFRecordDataset({data::record_bytes(f[0])}, compression);
          },
          /*cycle_length=*/parallel, /*block_length=*/1, /*num_parallel_calls=*/parallel)
      .shuffle(10000, seed)
      .repeat()
      .map(decode, parallel)
      .batch(a.batch, /*drop_remainder=*/true)
      .prefetch(2);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    const data::Dataset ds = pipeline(a);
    auto it = ds.make_iterator();
    auto next = [&it] {
      auto b = it->next();
      if (!b) throw StateError("strata_input_bench: the repeated pipeline ended");
      return *b;
    };
    const Clock::time_point start = Clock::now();
    for (int64_t i = 0; i < a.warmup; ++i) next();
    const double warmup_s = std::chrono::duration<double>(Clock::now() - start).count();
    const int64_t batches = (a.images + a.batch - 1) / a.batch;
    double checksum = 0;
    const Clock::time_point t0 = Clock::now();
    for (int64_t i = 0; i < batches; ++i) {
      const data::Element b = next();
      checksum += double(b[0].data<float>()[0]) + double(b[1].data<int64_t>()[0]);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    const int64_t images = batches * a.batch;
    std::printf("pipeline  TFRecord PNGs -> parse, decode_png, crop, flip -> batch %lld, "
                "%d thread(s), map %s\n", static_cast<long long>(a.batch), a.threads,
                a.map.c_str());
    std::printf("warm-up   %lld batches in %.2f s\n", static_cast<long long>(a.warmup), warmup_s);
    std::printf("images/s  %.1f (%lld images in %.2f s; checksum %.3f)\n", double(images) / seconds,
                static_cast<long long>(images), seconds, checksum);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

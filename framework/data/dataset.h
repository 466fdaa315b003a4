// Dataset: a tf.data-like input pipeline. A Dataset is an immutable, cheap-to-copy description;
// make_iterator() starts a pass over it. Elements are tuples of tensors: (x), (x, y) or
// (x, y, sample_weight), as Keras' fit() expects.
//
//   auto ds = data::Dataset::from_tensor_slices({x_train, y_train})
//                 .shuffle(10000, /*seed=*/42)
//                 .map(augment, /*num_parallel_calls=*/data::kAutotune)
//                 .batch(128)
//                 .prefetch(2);
//   auto it = ds.make_iterator();
//   while (auto batch = it->next()) { /* (*batch)[0], (*batch)[1] */ }
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/core/tensor.h"

namespace strata::data {

using Element = std::vector<Tensor>;
using MapFn = std::function<Element(const Element&)>;

inline constexpr int64_t kInfiniteCardinality = -1;  // tf.data.INFINITE_CARDINALITY
inline constexpr int64_t kUnknownCardinality = -2;   // tf.data.UNKNOWN_CARDINALITY
inline constexpr int kAutotune = -1;                 // tf.data.AUTOTUNE: one worker per core

// One pass over a dataset. Not thread-safe: one consumer at a time.
class Iterator {
 public:
  virtual ~Iterator() = default;
  // The next element, or nullopt at the end of the pass.
  virtual std::optional<Element> next() = 0;
  // Advances past up to n elements and returns how many were skipped (fewer only at the end).
  // Sources and element-wise stages override it to skip without producing the elements, so a
  // pipeline can resume mid-epoch cheaply; the default simply calls next() n times.
  virtual int64_t skip(int64_t n) {
    int64_t done = 0;
    while (done < n && next()) ++done;
    return done;
  }
};

class DatasetImpl;  // a node of the pipeline (see dataset_ops.h)

class Dataset {
 public:
  // Slices each component along axis 0; all components must have the same first dimension.
  static Dataset from_tensor_slices(const std::vector<Tensor>& components);
  // A dataset of one element: the tensors themselves.
  static Dataset from_tensors(const std::vector<Tensor>& components);
  // Elements produced by `make_generator()` (called once per pass) until it returns nullopt.
  static Dataset from_generator(std::function<std::function<std::optional<Element>()>()> make_generator,
                                int64_t cardinality = kUnknownCardinality);
  // The files matching `pattern` (a shell glob: *, ? and [...] in any path component), one
  // element each: the path as a 1-D uint8 tensor of its bytes (record_bytes() in
  // bytes_tensor.h gives the string back; tensors have no string dtype). Sorted by name; with
  // `shuffle` (the default, as tf.data.Dataset.list_files) in a random order that `seed` decides
  // (seed < 0 draws one), a different one each pass. ValueError naming the pattern when no file
  // matches (TensorFlow's InvalidArgumentError).
  static Dataset list_files(const std::string& pattern, bool shuffle = true, int64_t seed = -1);

  // Random order through a buffer of `buffer_size` elements (tf.data semantics). seed < 0 draws
  // a seed from the global generator. With reshuffle_each_iteration, each pass (each epoch)
  // uses a different order, still determined by the seed.
  Dataset shuffle(int64_t buffer_size, int64_t seed = -1,
                  bool reshuffle_each_iteration = true) const;
  // Stacks consecutive elements along a new axis 0.
  Dataset batch(int64_t batch_size, bool drop_remainder = false) const;
  // Applies fn to each element; num_parallel_calls > 1 (or kAutotune) runs fn on a thread pool,
  // keeping the order of elements.
  Dataset map(MapFn fn, int num_parallel_calls = 1) const;
  // fn maps each element to a dataset, whose elements are interleaved (tf.data's interleave,
  // deterministic): cycle_length inputs are open at once (kAutotune: one per core), and
  // block_length consecutive elements are taken from each in turn; an input that ends is
  // replaced by the next element's dataset in its place. num_parallel_calls > 1 (or kAutotune)
  // reads each open input ahead on a thread of its own; the order stays the same.
  //   Dataset::list_files(dir + "/*.tfrecord").interleave(
  //       [](const Element& f) { return TFRecordDataset({record_bytes(f[0])}); }, 4);
  Dataset interleave(std::function<Dataset(const Element&)> fn, int cycle_length = kAutotune,
                     int block_length = 1, int num_parallel_calls = 1) const;
  // count < 0: forever.
  Dataset repeat(int64_t count = -1) const;
  Dataset take(int64_t count) const;
  Dataset skip(int64_t count) const;
  // Every num_shards-th element starting at index (for multi-worker input).
  Dataset shard(int64_t num_shards, int64_t index) const;
  // The first complete pass is kept in memory; later passes replay it.
  Dataset cache() const;
  // Produces up to buffer_size elements ahead on a background thread.
  Dataset prefetch(int64_t buffer_size = 1) const;

  std::unique_ptr<Iterator> make_iterator() const;
  // Number of elements, or kInfiniteCardinality / kUnknownCardinality.
  int64_t cardinality() const;
  // What decides the order of future passes (each reshuffling shuffle()'s pass count), and its
  // restore: a resumed run (BackupAndRestore) makes the passes the interrupted one would have.
  std::vector<uint64_t> state() const;
  void restore_state(const std::vector<uint64_t>& state) const;

  explicit Dataset(std::shared_ptr<const DatasetImpl> impl) : impl_(std::move(impl)) {}
  const std::shared_ptr<const DatasetImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<const DatasetImpl> impl_;
};

}  // namespace strata::data

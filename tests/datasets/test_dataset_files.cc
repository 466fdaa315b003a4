// Dataset::list_files and Dataset::interleave: the files of a pattern (sorted, or shuffled by a
// seed and reshuffled each pass), TensorFlow's interleave order (its documented examples,
// ported), the same order with inputs read ahead on threads, and TFRecord files read through
// both.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "datasets/dataset_test_utils.h"
#include "datasets/temp_dir.h"
#include "datasets/tfrecord/tfrecord_dataset.h"
#include "framework/data/bytes_tensor.h"
#include "framework/data/dataset.h"
#include "framework/summary/record_writer.h"
#include "support/test_helpers.h"

namespace strata::data {
namespace {

using strata::testing::expect_error;
using strata::testing::TempDir;
using testing::range_ds;
using testing::scalars;

std::vector<std::string> paths(const Dataset& ds) {
  std::vector<std::string> out;
  auto it = ds.make_iterator();
  while (auto e = it->next()) out.push_back(record_bytes((*e)[0]));
  return out;
}

// Files b.tfrecord, a.tfrecord, c.tfrecord, d.txt in a new directory; returns its path.
std::string make_files(const TempDir& dir) {
  for (const std::string name : {"b.tfrecord", "a.tfrecord", "c.tfrecord", "d.txt"}) {
    std::ofstream(dir.file(name)) << name;
  }
  return dir.path().string();
}

TEST(DatasetListFiles, SortedWithoutShuffleAndAPermutationBySeedWithIt) {
  TempDir dir;
  const std::string root = make_files(dir);
  const std::vector<std::string> sorted = {root + "/a.tfrecord", root + "/b.tfrecord",
                                           root + "/c.tfrecord"};
  const Dataset plain = Dataset::list_files(root + "/*.tfrecord", /*shuffle=*/false);
  EXPECT_EQ(plain.cardinality(), 3);
  EXPECT_EQ(paths(plain), sorted);
  EXPECT_EQ(paths(Dataset::list_files(root + "/[ab].tfrecord", false)),
            (std::vector<std::string>{sorted[0], sorted[1]}));

  const Dataset shuffled = Dataset::list_files(root + "/*.tfrecord", /*shuffle=*/true, 7);
  std::vector<std::vector<std::string>> passes;
  for (int p = 0; p < 6; ++p) passes.push_back(paths(shuffled));
  for (const auto& pass : passes) {
    std::vector<std::string> s = pass;
    std::sort(s.begin(), s.end());
    EXPECT_EQ(s, sorted);  // every file once per pass
  }
  // Reshuffled each pass (6 passes of 3 files all alike would be a 1 in 7776 chance)...
  EXPECT_TRUE(std::any_of(passes.begin(), passes.end(), [&](const auto& p) { return p != passes[0]; }));
  // ... and the seed decides the passes.
  const Dataset again = Dataset::list_files(root + "/*.tfrecord", true, 7);
  for (int p = 0; p < 6; ++p) EXPECT_EQ(paths(again), passes[size_t(p)]);
}

TEST(DatasetListFiles, NoMatchIsAnErrorNamingThePattern) {
  TempDir dir;
  const std::string pattern = dir.path().string() + "/*.tfrecord";
  expect_error<ValueError>([&] { Dataset::list_files(pattern); }, {pattern, "no files match"});
  expect_error<ValueError>([&] { Dataset::list_files(""); }, {"empty"});
}

// tf.data.Dataset.interleave's documented examples, with range(1, 6) as input.
Dataset one_to_five() {
  return range_ds(6).skip(1);
}

TEST(DatasetInterleave, TensorFlowsExamplesInOrder) {
  for (int parallel : {1, 2}) {
    SCOPED_TRACE("num_parallel_calls " + std::to_string(parallel));
    // Each x repeated 6 times, cycle_length 2, block_length 4.
    const Dataset a = one_to_five().interleave(
        [](const Element& e) { return Dataset::from_tensors({e[0]}).repeat(6); }, 2, 4, parallel);
    EXPECT_EQ(scalars(a), (std::vector<int64_t>{1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3,
                                                3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5}));
    // Datasets of different lengths (x elements each), cycle_length 3, block_length 1: an
    // input that ends is replaced in its place by the next one.
    const Dataset b = one_to_five().interleave(
        [](const Element& e) { return Dataset::from_tensors({e[0]}).repeat(e[0].item<int64_t>()); },
        3, 1, parallel);
    EXPECT_EQ(scalars(b), (std::vector<int64_t>{1, 2, 3, 2, 3, 4, 3, 4, 5, 4, 5, 4, 5, 5, 5}));
  }
}

TEST(DatasetInterleave, ArgumentsAreChecked) {
  const auto fn = [](const Element& e) { return Dataset::from_tensors({e[0]}); };
  expect_error<ValueError>([&] { range_ds(3).interleave(fn, 0); }, {"cycle_length", "got 0"});
  expect_error<ValueError>([&] { range_ds(3).interleave(fn, 2, 0); }, {"block_length", "got 0"});
  expect_error<ValueError>([&] { range_ds(3).interleave(fn, 2, 1, 0); },
                           {"num_parallel_calls", "got 0"});
  expect_error<ValueError>([&] { range_ds(3).interleave(nullptr); }, {"function is empty"});
  // A cycle as long as the input reads one element from each in turn.
  EXPECT_EQ(scalars(range_ds(4).interleave(fn, 8)), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(DatasetInterleave, TFRecordFilesListedAndInterleaved) {
  TempDir dir;
  for (int f = 0; f < 3; ++f) {
    TFRecordWriter w(dir.file("part-" + std::to_string(f) + ".tfrecord"));
    for (int r = 0; r < 2 + f; ++r) w.write(std::to_string(f) + ":" + std::to_string(r));
  }
  const Dataset records =
      Dataset::list_files(dir.path().string() + "/part-*.tfrecord", /*shuffle=*/false)
          .interleave([](const Element& f) { return TFRecordDataset({record_bytes(f[0])}); },
                      /*cycle_length=*/2, /*block_length=*/2, /*num_parallel_calls=*/2);
  // part-0 (2 records) and part-1 (3) open first; part-2 (4) takes part-0's place once that
  // ends, and reads on alone once part-1 ends.
  EXPECT_EQ(paths(records), (std::vector<std::string>{"0:0", "0:1", "1:0", "1:1", "1:2", "2:0",
                                                       "2:1", "2:2", "2:3"}));
}

}  // namespace
}  // namespace strata::data

// data::shard_by_file: TensorFlow's auto-shard rewrite for AutoShardPolicy.FILE, with the cases
// of its tests (tensorflow/python/data/experimental/kernel_tests/auto_shard_dataset_test.py):
// 10 files of 10 records "Record r of file f", divided among workers.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "datasets/dataset_test_utils.h"
#include "datasets/temp_dir.h"
#include "datasets/tfrecord/tfrecord_dataset.h"
#include "framework/data/bytes_tensor.h"
#include "framework/data/dataset.h"
#include "framework/data/file_sharding.h"
#include "framework/summary/record_writer.h"
#include "support/test_helpers.h"

namespace strata::data {
namespace {

using strata::testing::expect_error;
using strata::testing::TempDir;
using testing::range_ds;

constexpr int kFiles = 10, kRecords = 10;

std::string record(int r, int f) {
  return "Record " + std::to_string(r) + " of file " + std::to_string(f);
}

// tf_record.0.txt ... tf_record.9.txt (TensorFlow's test names), kRecords records each.
std::vector<std::string> make_files(const TempDir& dir) {
  std::vector<std::string> files;
  for (int f = 0; f < kFiles; ++f) {
    files.push_back(dir.file("tf_record." + std::to_string(f) + ".txt"));
    TFRecordWriter w(files.back());
    for (int r = 0; r < kRecords; ++r) w.write(record(r, f));
  }
  return files;
}

Dataset read_each(const Dataset& files, int cycle_length) {
  return files.interleave([](const Element& f) { return TFRecordDataset({record_bytes(f[0])}); },
                          cycle_length);
}

// Every element's strings (batches: each row's, in order), and the size of each element.
struct Output {
  std::vector<std::string> records;
  std::vector<int64_t> sizes;
};
Output output(const Dataset& ds) {
  Output out;
  auto it = ds.make_iterator();
  while (auto e = it->next()) {
    const Tensor& t = (*e)[0];
    if (t.rank() == 1) {  // one record
      out.records.push_back(record_bytes(t));
      out.sizes.push_back(1);
    } else {  // a batch of records of equal length, [n, length]
      out.sizes.push_back(t.dim(0));
      for (int64_t i = 0; i < t.dim(0); ++i) out.records.push_back(record_bytes(t.slice(i, i + 1).reshape({t.dim(1)})));
    }
  }
  return out;
}

std::vector<std::string> expected(const std::vector<int>& files, bool record_major) {
  std::vector<std::string> out;
  if (record_major) {
    for (int r = 0; r < kRecords; ++r) for (int f : files) out.push_back(record(r, f));
  } else {
    for (int f : files) for (int r = 0; r < kRecords; ++r) out.push_back(record(r, f));
  }
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string pattern(const TempDir& dir) { return dir.path().string() + "/tf_record.*.txt"; }

// testFlatMapReaderPipeline: list_files (shuffled or not), one file read after another,
// batch(5) -> worker 3 of 5 reads files 3 and 8, in batches of 1 (its fifth of each batch).
TEST(FileSharding, ListFilesThenReadEachFileWorker3Of5ReadsFiles3And8) {
  TempDir dir;
  make_files(dir);
  for (bool shuffle : {false, true}) {
    SCOPED_TRACE(shuffle ? "shuffled file list" : "sorted file list");
    const Dataset ds = read_each(Dataset::list_files(pattern(dir), shuffle, 7), 1).batch(5);
    const Output got = output(*shard_by_file(ds, 5, 3));
    if (shuffle) {
      EXPECT_EQ(sorted(got.records), sorted(expected({3, 8}, false)));
    } else {
      EXPECT_EQ(got.records, expected({3, 8}, false));
    }
    EXPECT_EQ(got.sizes, std::vector<int64_t>(20, 1));
  }
}

// testPipelineWithMap / testSampleResNetPipeline: parallel reads (cycle 10), a map, batch(10)
// -> worker 3 of 5 reads records r of files 3 and 8 in turn, in batches of 2.
TEST(FileSharding, InterleavedReadsAndAMapWorker3Of5) {
  TempDir dir;
  make_files(dir);
  const Dataset ds = read_each(Dataset::list_files(pattern(dir), false), 10)
                         .map([](const Element& e) {  // substr(x, 2): drops "Re"
                           const std::string s = record_bytes(e[0]);
                           return Element{bytes_tensor(s.substr(2))};
                         })
                         .batch(10);
  std::vector<std::string> want;
  for (const std::string& r : expected({3, 8}, true)) want.push_back(r.substr(2));
  const Output got = output(*shard_by_file(ds, 5, 3));
  EXPECT_EQ(got.records, want);
  EXPECT_EQ(got.sizes, std::vector<int64_t>(10, 2));
}

// testDirectFilenameTFRecordReaderPipeline: TFRecordDataset(files) itself is the file source.
TEST(FileSharding, TFRecordDatasetOfFilesWorker0Of5ReadsFiles0And5) {
  TempDir dir;
  const Dataset ds = TFRecordDataset(make_files(dir));
  EXPECT_EQ(output(*shard_by_file(ds, 5, 0)).records, expected({0, 5}, false));
}

// The check (TensorFlow's testReplicateAndShardProduceDisjointData): over 2 and 3
// workers the files read are disjoint and together every file, each record once.
TEST(FileSharding, TwoAndThreeWorkersReadDisjointFilesCoveringAll) {
  TempDir dir;
  make_files(dir);
  const Dataset ds = read_each(Dataset::list_files(pattern(dir), true, 3), 2).batch(6);
  for (int workers : {2, 3}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    std::multiset<std::string> all;
    for (int w = 0; w < workers; ++w) {
      const Output got = output(*shard_by_file(ds, workers, w));
      std::set<int> files;
      for (const std::string& r : got.records) files.insert(std::stoi(r.substr(r.rfind(' ') + 1)));
      for (int f : files) EXPECT_EQ(f % workers, w) << "worker " << w << " read file " << f;
      for (int64_t size : got.sizes) EXPECT_LE(size, 6 / workers);
      all.insert(got.records.begin(), got.records.end());
    }
    std::vector<std::string> every = expected({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, false);
    EXPECT_EQ(std::vector<std::string>(all.begin(), all.end()), sorted(every));
  }
}

// A shuffled file list is divided before it is shuffled (TensorFlow moves the shuffle after the
// shard): each worker gets its files of the sorted list, in an order its seed decides, a new one
// each pass.
TEST(FileSharding, AShuffledFileListIsDividedInSortedOrderThenShuffledWithItsSeed) {
  TempDir dir;
  make_files(dir);
  auto file_order = [&](int64_t seed) {
    const Dataset mine = *shard_by_file(Dataset::list_files(pattern(dir), true, seed), 2, 1);
    std::vector<std::vector<std::string>> passes;
    for (int p = 0; p < 3; ++p) {
      std::vector<std::string> names;
      auto it = mine.make_iterator();
      while (auto e = it->next()) {
        const std::string path = record_bytes((*e)[0]);
        names.push_back(path.substr(path.rfind('/') + 1));
      }
      passes.push_back(names);
    }
    return passes;
  };
  const auto passes = file_order(11);
  const std::vector<std::string> odd = {"tf_record.1.txt", "tf_record.3.txt", "tf_record.5.txt",
                                        "tf_record.7.txt", "tf_record.9.txt"};
  for (const auto& pass : passes) EXPECT_EQ(sorted(pass), odd);
  EXPECT_TRUE(passes[0] != passes[1] || passes[1] != passes[2]) << "every pass in one order";
  EXPECT_EQ(file_order(11), passes) << "the same seed, the same orders";
}

// testWorkersGreaterThanNumFiles (TensorFlow >= 2.4: "Could not apply FILE based sharding"):
// some worker would read nothing.
TEST(FileSharding, FewerFilesThanWorkersIsAnErrorNamingTheCounts) {
  TempDir dir;
  const Dataset ds = TFRecordDataset(make_files(dir)).batch(500);
  expect_error<ValueError>([&] { shard_by_file(ds, 500, 499, "Model.fit"); },
                           {"Model.fit", "500 workers", "only 10 file(s)", "AutoShardPolicy::kData"});
  expect_error<ValueError>([&] { shard_by_file(ds, 11, 0); }, {"11 workers", "only 10 file(s)"});
}

// testFileShardingWithoutReaderDatasetOp / testNoReaderPipelines: no file source, nothing to
// divide by file (file names from tensors are not taken for files either).
TEST(FileSharding, PipelinesWithoutAFileSourceAreNotDividedByFile) {
  EXPECT_FALSE(shard_by_file(range_ds(1024).batch(4), 2, 0));
  EXPECT_FALSE(pipeline_files(range_ds(8)));
  TempDir dir;
  const std::vector<std::string> files = make_files(dir);
  std::vector<Tensor> names;
  for (const std::string& f : files) names.push_back(bytes_tensor(f));
  const Dataset from_names = Dataset::from_generator(
      [names] {
        auto i = std::make_shared<size_t>(0);
        return [names, i]() -> std::optional<Element> {
          if (*i >= names.size()) return std::nullopt;
          return Element{names[(*i)++]};
        };
      });
  EXPECT_FALSE(shard_by_file(read_each(from_names, 1), 2, 0));
  ASSERT_TRUE(pipeline_files(TFRecordDataset(files).batch(2)));
  EXPECT_EQ(*pipeline_files(TFRecordDataset(files).batch(2)), files);
}

TEST(FileSharding, AGlobalBatchThatDoesNotDivideAmongTheWorkersIsAnError) {
  TempDir dir;
  const Dataset ds = TFRecordDataset(make_files(dir)).batch(5);
  expect_error<ValueError>([&] { shard_by_file(ds, 2, 0, "Model.fit"); },
                           {"Model.fit", "global batch of 5", "2 workers", "multiple of 2"});
  expect_error<ValueError>([&] { shard_by_file(ds, 2, 2); }, {"worker index 2 of 2"});
}

// Only the batch nearest the end is divided (a batch of file names below it is the pipeline's
// own business), repeat/take/prefetch/shuffle/cache stay as they were.
TEST(FileSharding, NodesAboveTheSourceAreKeptAndOnlyTheLastBatchIsDivided) {
  TempDir dir;
  make_files(dir);
  const Dataset ds = read_each(Dataset::list_files(pattern(dir), false), 1)
                         .cache()
                         .shuffle(4, 5)
                         .batch(4)
                         .repeat(2)
                         .take(30)
                         .prefetch(2);
  const Output got = output(*shard_by_file(ds, 2, 0));
  // 50 records in batches of 2 -> 25 batches a pass, twice, 30 taken.
  EXPECT_EQ(got.sizes, std::vector<int64_t>(30, 2));
  const std::vector<std::string> mine = expected({0, 2, 4, 6, 8}, false);
  const std::set<std::string> allowed(mine.begin(), mine.end());
  for (const std::string& r : got.records) EXPECT_TRUE(allowed.count(r)) << r;
}

}  // namespace
}  // namespace strata::data

// Dividing a pipeline that reads files among the workers of a job by file: what TensorFlow's
// auto-shard rewrite does for tf.data.experimental.AutoShardPolicy.FILE (auto_shard.cc), and
// what AUTO chooses for such a pipeline. Strategy::experimental_distribute_dataset and
// Model.fit / evaluate apply it (framework/strategy/auto_shard.h); it is public for custom loops.
//
//   auto ds = data::Dataset::list_files(dir + "/train-*.tfrecord")        // 10 files
//                 .interleave([](const data::Element& f) {
//                   return data::TFRecordDataset({data::record_bytes(f[0])}); })
//                 .map(parse).batch(128);
//   data::Dataset mine = *data::shard_by_file(ds, /*num_workers=*/2, /*index=*/1);
//   // worker 1 reads files 1, 3, 5, 7, 9 (of the sorted list) in batches of 64
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framework/data/dataset.h"

namespace strata::data {

// The files the pipeline reads: those of its file source (list_files, TFRecordDataset), reached
// from its end through nodes of one input (batch, map, interleave, shuffle, prefetch, repeat,
// take, skip, shard, cache), in the order the source lists them (sorted, for list_files).
// nullopt when the pipeline starts elsewhere (tensors, a generator), TensorFlow's "no shardable
// source": the file names of from_tensor_slices, for one, are not taken for files.
std::optional<std::vector<std::string>> pipeline_files(const Dataset& dataset);

// What worker `index` of `num_workers` reads: the same pipeline with its file source reading
// only the files index, index + num_workers, index + 2 num_workers, ... of pipeline_files()
// (a shuffle of the file list, as list_files' own, then shuffles this worker's files alone,
// with the same seed), and the batch nearest the pipeline's end num_workers times smaller: each
// worker's batch is its part of the global batch, as under AutoShardPolicy::kData, and the
// workers' batches together are the global batch the pipeline names. nullopt when the pipeline
// reads no files. ValueError naming `who` when there are fewer files than workers (some worker
// would read nothing; TensorFlow's "Could not apply FILE based sharding"), or when the global
// batch is not a multiple of num_workers.
std::optional<Dataset> shard_by_file(const Dataset& dataset, int64_t num_workers, int64_t index,
                                     const std::string& who = "shard_by_file");

}  // namespace strata::data

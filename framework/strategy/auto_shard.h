// How a dataset is divided among the workers of a multi-worker strategy
// (tf.data.experimental.AutoShardPolicy), applied by Strategy::experimental_distribute_dataset.
//
//   kAuto: kFile for a dataset that reads files (list_files or TFRecordDataset at its source:
//          data::pipeline_files), else kData, as TensorFlow's auto-shard rewrite. Model.fit and
//          evaluate with a Dataset apply kAuto (predict keeps kData, so its outputs keep the
//          input's order).
//   kFile: each worker reads its own files (data::shard_by_file): worker w of N the files w,
//          w + N, ... of the listed (sorted) files, shuffled among themselves if the list was,
//          in batches of its part of the global batch (the batch nearest the pipeline's end
//          made N times smaller). Fewer files than workers is a ValueError naming the counts
//          (TensorFlow's "Could not apply FILE based sharding"); so is a dataset without file
//          sources (TensorFlow falls back with a warning; a silent change of policy is what
//          Strata avoids). The workers agree on each step's batch as under kOff, so a worker
//          whose files run out first is an error naming it, not a hang.
//   kData: every worker reads the whole dataset and keeps its own part of each global batch
//          (worker w the w-th of num_workers parts, split over its replicas). Every worker takes
//          the same number of steps, a final partial batch included (the replicas left without
//          samples compute on a stand-in that counts for nothing), so nothing can hang.
//   kOff:  no division: each worker's batches are its own (its dataset already differs, e.g. it
//          was sharded by hand with dataset.shard(num_workers, worker_index)); the global batch is
//          every worker's together. Workers compare their batches as they go: identical first
//          batches (every worker would train on the same data) or a dataset that ends on some
//          workers but not others (steps would no longer match) is a ValueError naming the
//          workers and the counts.
#pragma once

namespace strata::distribute {

enum class AutoShardPolicy { kAuto, kFile, kData, kOff };

const char* auto_shard_policy_name(AutoShardPolicy policy);

}  // namespace strata::distribute

// How a dataset is divided among the workers of a multi-worker strategy
// (tf.data.experimental.AutoShardPolicy), applied by Strategy::experimental_distribute_dataset.
//
//   kAuto: kFile for a dataset read from files, else kData. Strata's datasets are built from
//          tensors and generators (the loaders read files into tensors), so: kData.
//   kFile: each worker reads its own files. A dataset without file sources cannot be divided so:
//          ValueError saying to use kData or kAuto (TensorFlow falls back with a warning; a
//          silent change of policy is what Strata avoids).
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

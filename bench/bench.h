// Subcommands of strata_bench. Each takes the arguments after its name and returns an exit code.
#pragma once

namespace strata::bench {

// `strata_bench ops [--reps N]`: fp32 peak, matmul and ResNet-20 convolution throughput.
int run_ops(int argc, char** argv);

// `strata_bench train --model mnist_cnn|resnet20..resnet110 --batch B --steps N [--device gpu]
// [--dtype bf16] [--epoch] ...`: full training steps through model.fit (or train_on_batch) on
// the CPU or GPUs (train_bench.cc).
int run_train(int argc, char** argv);

// `strata_bench scale`: one worker of a MultiWorkerMirroredStrategy job (strata-launch starts
// them): time to ready, 4 KB and 16 MB all-reduce, bytes through the coordination service
// (scale_bench.cc; bench/scale_compare.sh).
int run_scale(int argc, char** argv);

}  // namespace strata::bench

// Subcommands of strata_bench. Each takes the arguments after its name and returns an exit code.
#pragma once

namespace strata::bench {

// `strata_bench ops [--reps N]`: fp32 peak, matmul and ResNet-20 convolution throughput.
int run_ops(int argc, char** argv);

// `strata_bench train --model mnist_cnn|resnet20 --batch B --steps N [--optimizer ...]`: full
// training steps through model.train_on_batch.
int run_train(int argc, char** argv);

}  // namespace strata::bench

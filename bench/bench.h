// Subcommands of strata_bench. Each takes the arguments after its name and returns an exit code.
#pragma once

namespace strata::bench {

// `strata_bench ops [--reps N]`: fp32 peak, matmul and ResNet-20 convolution throughput.
int run_ops(int argc, char** argv);

}  // namespace strata::bench

// Trains a small classifier on a synthetic problem (three interleaved spirals) with a custom
// training loop: GradientTape, a loss, and optimizer.apply_gradients. Prints the loss falling.
//
//   train_synthetic [--epochs N] [--batch_size B] [--seed S]
#include <strata/strata.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

using namespace strata;

namespace {

struct Flags {
  int epochs = 20;
  int batch_size = 64;
  int seed = 42;
};

Flags parse_flags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> int {
      if (i + 1 >= argc) throw ValueError("flag " + arg + " needs a value");
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v <= 0 || v > 1000000) {
        throw ValueError("flag " + arg + ": expected a positive integer, got '" + argv[i] + "'");
      }
      return int(v);
    };
    if (arg == "--epochs") f.epochs = value();
    else if (arg == "--batch_size") f.batch_size = value();
    else if (arg == "--seed") f.seed = value();
    else if (arg == "--help" || arg == "-h") {
      std::cout << "usage: train_synthetic [--epochs N=20] [--batch_size B=64] [--seed S=42]\n";
      std::exit(0);
    } else {
      throw ValueError("unknown flag '" + arg + "'; run with --help for the list");
    }
  }
  return f;
}

// Three spirals in 2-D, 600 points each, with a little noise.
void make_spirals(int per_class, Tensor& x, Tensor& y) {
  std::vector<float> xs;
  std::vector<int64_t> ys;
  const Tensor noise = random_normal({int64_t(per_class) * 3, 2}, 0.0, 0.05);
  const std::vector<float> nv = noise.to_vector<float>();
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < per_class; ++i) {
      const float r = float(i) / float(per_class);
      const float t = float(c) * 2.094f + r * 4.0f;
      const size_t k = size_t(c * per_class + i);
      xs.push_back(r * std::sin(t) + nv[2 * k]);
      xs.push_back(r * std::cos(t) + nv[2 * k + 1]);
      ys.push_back(c);
    }
  }
  x = Tensor::from_vector(xs, {int64_t(per_class) * 3, 2});
  y = Tensor::from_vector(ys);
}

}  // namespace

int main(int argc, char** argv) try {
  const Flags flags = parse_flags(argc, argv);
  set_random_seed(uint64_t(flags.seed));

  Tensor x, y;
  make_spirals(600, x, y);
  const int64_t n = x.dim(0);

  Sequential model({Dense(64, "relu"), Dense(64, "relu"), Dense(3)});
  optimizers::Adam optimizer(0.01);
  losses::SparseCategoricalCrossentropy loss_fn(/*from_logits=*/true);

  std::printf("Training a 2-64-64-3 MLP on %lld synthetic spiral points, %d threads\n",
              static_cast<long long>(n), get_num_threads());
  const auto start = std::chrono::steady_clock::now();
  for (int epoch = 1; epoch <= flags.epochs; ++epoch) {
    // A fresh shuffle each epoch, from the seeded global generator.
    const Tensor perm_keys = random_uniform({n});
    std::vector<float> keys = perm_keys.to_vector<float>();
    std::vector<int64_t> perm(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) perm[size_t(i)] = i;
    std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return keys[size_t(a)] < keys[size_t(b)]; });
    const Tensor perm_t = Tensor::from_vector(perm);
    const Tensor xs = gather(x, perm_t), ys = gather(y, perm_t);

    double total = 0;
    int64_t batches = 0;
    for (int64_t b = 0; b < n; b += flags.batch_size) {
      const int64_t e = std::min(n, b + flags.batch_size);
      const Tensor xb = xs.slice(b, e), yb = ys.slice(b, e);
      GradientTape tape;
      const Tensor loss = loss_fn(yb, model(xb, /*training=*/true));
      const auto vars = model.trainable_variables();
      optimizer.apply_gradients(tape.gradient(loss, vars), vars);
      total += loss.item<double>();
      ++batches;
    }
    const Tensor logits = model(x);
    const double accuracy =
        reduce_mean(cast(equal(argmax(logits, -1), y), float32)).item<double>();
    std::printf("epoch %2d/%d  loss %.4f  accuracy %.4f\n", epoch, flags.epochs,
                total / double(batches), accuracy);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("done in %.2fs\n", seconds);
  return 0;
} catch (const strata::Error& e) {
  std::cerr << "error: " << e.what() << "\n";
  return 2;
}

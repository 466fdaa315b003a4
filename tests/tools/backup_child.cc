// A training run for the kill-and-resume tests (test_backup_and_restore.cc), run as a separate
// process so the test can SIGKILL or SIGTERM it mid-epoch:
//   strata_backup_child <backup_dir> <weights_out> [batch_delay_ms]
// Trains a small model with shuffling and dropout (so the data order and the generator state
// both matter) under BackupAndRestore(save_freq=2 batches); writes the final weights' raw float
// bytes to <weights_out>. Exit status: 0 done, 128+signal when stopped by SIGTERM/SIGINT.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include <strata/strata.h>

#include "framework/callbacks/backup_and_restore.h"

using namespace strata;

namespace {
// Slows batches down so a test can land a signal mid-epoch.
class Delay : public Callback {
 public:
  explicit Delay(int ms) : ms_(ms) {}
  void on_train_batch_end(int, const Logs&) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
  }

 private:
  int ms_;
};
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <backup_dir> <weights_out> [batch_delay_ms]\n", argv[0]);
    return 2;
  }
  const int delay_ms = argc > 3 ? std::stoi(argv[3]) : 0;
  try {
    set_random_seed(1234);
    const Tensor x = random_normal({96, 6});
    const Tensor y = cast(greater(reduce_sum(x, {1}), zeros({96})), int64);
    Sequential model({std::make_shared<Dense>(16, DenseOptions().activation("relu")),
                      std::make_shared<Dropout>(0.3), std::make_shared<Dense>(2)});
    model.compile(CompileOptions()
                      .optimizer(std::make_shared<optimizers::Adam>(0.01))
                      .loss(std::make_shared<losses::SparseCategoricalCrossentropy>(true))
                      .metrics({"accuracy"}));
    std::vector<CallbackPtr> callbacks{
        std::make_shared<BackupAndRestore>(argv[1], BackupAndRestoreOptions().save_freq(2))};
    if (delay_ms > 0) callbacks.push_back(std::make_shared<Delay>(delay_ms));
    model.fit(x, y, FitOptions().epochs(4).batch_size(8).verbose(0).callbacks(callbacks));
    std::ofstream out(argv[2], std::ios::binary);
    for (const Tensor& w : model.get_weights()) {
      const std::vector<float> v = w.to_vector<float>();
      out.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(float)));
    }
    return out ? 0 : 1;
  } catch (const TrainingInterrupted& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 128 + e.signal();
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

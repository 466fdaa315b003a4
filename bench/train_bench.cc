// `strata_bench train`: full training steps (forward, backward, optimizer update) through the
// public Keras API on synthetic data of the model's shape, on the CPU or GPUs.
//
//   strata_bench train --model mnist_cnn --batch 64 --steps 50
//   strata_bench train --model resnet20 --batch 128 --steps 10 [--optimizer sgd_momentum]
//   strata_bench train --model resnet56 --batch 128 --steps 100 --device gpu --dtype bf16
//   strata_bench train --model mnist_cnn --batch 128 --device gpu --epoch
//   strata_bench train --model resnet20 --batch 128 --steps 20 --strategy mirrored --replicas 2
//   strata-launch --workers 2 -- strata_bench train --model resnet20 --batch 64 --steps 50 \
//       --strategy multi_worker_mirrored
//
// Models: see train_models.h (mnist_cnn, resnet20 ... resnet110); bench/reference/
// pytorch_train.py runs the same models, batch, optimizer and precision in PyTorch and prints
// the same lines.
// --device gpu trains on /gpu:0: the model is built and compiled under DeviceScope(/gpu:0) and
// the synthetic batch lives there. --dtype bf16|fp16 sets Keras' mixed-precision policy
// (mixed_bfloat16 / mixed_float16: float32 variables, 16-bit compute; fp16 adds loss scaling)
// before the model is built.
// --strategy mirrored|central_storage --replicas N builds and compiles the model in that
// strategy's scope over N GPUs with --device gpu, or over N logical CPU devices
// (config::set_logical_cpu_devices: each replica gets its share of the threads); each step then
// splits the global --batch, held on the host, over the replicas. one_device runs through
// OneDeviceStrategy, off (the default) without a strategy. multi_worker_mirrored is one process
// of a job (TF_CONFIG names its task; strata-launch starts them): --batch is then the batch of
// each worker (weak scaling, as PyTorch DDP), split over its --replicas; every worker holds the
// same global batch of --batch x workers and fit keeps its own share. Every worker prints; the
// samples/s line counts the global samples (the workers step together, so their clocks agree).
//
// The timed loop. A GPU step returns as soon as its kernels are queued, so the clock is read only
// after waiting for the devices (step_timer.h). --loop fit (the default) runs the timed steps as
// one model.fit over the synthetic batch repeated (steps_per_epoch, verbose 0), compiled with
// steps_per_execution --sync_every: nothing reads a metric back in between, so the host waits for
// the devices only every --sync_every steps, when the clock is read. --loop train_on_batch waits
// after every step (train_on_batch returns the loss, read to the host): each step is timed, but a
// GPU idles while the host queues the next step. On the CPU, where nothing is queued, both loops
// cost the same per step (mnist_cnn, batch 16, one thread, 200 steps, five alternating runs on a
// shared 2-core machine: mean ms/step 20.3 fit, 21.4 train_on_batch, within the noise).
// --epoch times one model.fit epoch over --epoch_samples synthetic samples held on the host and
// shuffled, as apps/mnist trains (fit copies each batch to the device).
//
// --phases N then shows where a step's time goes (step_phases.h).
//
// Prints samples/s (samples are images) and ms/step (mean, median, best over the timed steps or,
// with fit, over the groups of --sync_every steps), the device and dtype, the peak resident
// memory of the process (getrusage ru_maxrss) and, on GPUs, the allocator's peak, plus the load
// average, since benchmark machines are often shared.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "apps/common/flags.h"
#include "apps/common/strategy_setup.h"
#include "bench.h"
#include "step_phases.h"
#include "step_timer.h"
#include "train_models.h"

namespace strata::bench {
namespace {

// Ranges: what a benchmark run can use; a value outside is an error naming the range.
using BatchFlag = apps::Ranged<int64_t, 1, 1'000'000>;
using StepsFlag = apps::Ranged<int64_t, 1, 1'000'000'000>;
using WarmupFlag = apps::Ranged<int64_t, 0, 1'000'000'000>;
using SyncEveryFlag = apps::Ranged<int64_t, 1, 1'000'000>;
using SamplesFlag = apps::Ranged<int64_t, 0, 1'000'000'000>;
using ReplicasFlag = apps::Ranged<int, 1, 256>;

}  // namespace
}  // namespace strata::bench

ABSL_FLAG(std::string, model, "resnet20", "Model: mnist_cnn, resnet20, resnet32, resnet44, "
          "resnet56 or resnet110.");
ABSL_FLAG(strata::bench::BatchFlag, batch, 128,
          "Batch size (the global batch under a strategy; each worker's under "
          "multi_worker_mirrored).");
ABSL_FLAG(strata::bench::StepsFlag, steps, 10, "Timed training steps (ignored with --epoch).");
ABSL_FLAG(strata::bench::WarmupFlag, warmup, 3, "Untimed training steps first.");
ABSL_FLAG(std::string, device, "cpu",
          "Where to train: cpu (/cpu:0) or gpu (/gpu:0; --replicas GPUs under a strategy).");
ABSL_FLAG(std::string, dtype, "fp32",
          "Precision: fp32, or bf16 / fp16 (Keras' mixed_bfloat16 / mixed_float16 policy: float32 "
          "variables, 16-bit compute).");
ABSL_FLAG(std::string, optimizer, "",
          "Optimizer: sgd, sgd_momentum or adam (default: sgd for mnist_cnn, sgd_momentum for the "
          "ResNets).");
ABSL_FLAG(std::string, loop, "fit",
          "Timed loop: fit (one model.fit over the repeated batch; the host waits for the device "
          "every --sync_every steps) or train_on_batch (a wait after every step).");
ABSL_FLAG(strata::bench::SyncEveryFlag, sync_every, 10,
          "With --loop fit and --epoch: fit's steps_per_execution, the steps timed as one group "
          "(the host waits for the device, and reads the clock, once per group).");
ABSL_FLAG(bool, epoch, false,
          "Time one model.fit epoch over --epoch_samples synthetic samples on the host, shuffled "
          "(as apps/mnist trains), instead of --steps steps on one batch.");
ABSL_FLAG(strata::bench::SamplesFlag, epoch_samples, 0,
          "Samples in the --epoch epoch (0: the real data set's training set: 60,000 for "
          "mnist_cnn, 50,000 for the ResNets).");
ABSL_FLAG(std::string, strategy, "off",
          "Distribution strategy: off, one_device, mirrored, central_storage or "
          "multi_worker_mirrored (the model is built and compiled in its scope; "
          "multi_worker_mirrored reads TF_CONFIG and waits for every worker).");
ABSL_FLAG(int, phases, 0,
          "After the timed run, where a step's time goes (step_phases.h): the forward pass, "
          "backward pass and optimizer each run this many times alone, the host's time to queue "
          "each beside the device's time to finish it (0: off; no strategy only).");
ABSL_FLAG(strata::bench::ReplicasFlag, replicas, 1,
          "Replicas for mirrored / central_storage (each worker's for multi_worker_mirrored): GPUs "
          "with --device gpu, logical CPU devices otherwise; --batch must be a multiple of it.");

namespace strata::bench {
namespace {

struct Options {
  std::string model, device, dtype, optimizer, loop, strategy;
  int64_t batch = 0, steps = 0, warmup = 0, sync_every = 0, epoch_samples = 0, replicas = 0;
  int phases = 0;
  bool epoch = false;

  bool on_gpu() const { return device == "gpu"; }
  // fit times the steps in groups; train_on_batch one by one.
  bool fit_loop() const { return epoch || loop == "fit"; }
  int steps_per_execution() const { return fit_loop() ? int(sync_every) : 1; }
};

// --device gpu with fewer GPUs than asked for: say why there are none and what to run instead.
void require_gpus(int64_t wanted) {
  const int visible = gpu::device_count();
  if (wanted <= visible) return;
  const std::string why =
      !gpu::built_with_cuda()
          ? "this build of Strata has no CUDA backend (configure found no nvcc, cuBLAS or cuDNN)"
      : gpu::versions().cuda_driver.empty()
          ? "no NVIDIA driver is loaded (libcuda.so.1 was not found)"
          : "the driver shows this process fewer GPUs (check nvidia-smi and CUDA_VISIBLE_DEVICES)";
  throw apps::FlagError("--device gpu needs " + std::to_string(wanted) +
                        " GPU(s), but strata::gpu::device_count() is " + std::to_string(visible) +
                        ": " + why + "; run strata-info to list devices, or use --device cpu");
}

// The flags, checked; FlagError otherwise (--help exits here).
Options parse_options(int argc, char** argv) {
  // parse_command_line reads argv[0] as the program name: put the subcommand there.
  std::vector<char*> args{const_cast<char*>("strata_bench train")};
  args.insert(args.end(), argv, argv + argc);
  apps::parse_command_line(int(args.size()), args.data(),
                           "Times full training steps (model.fit or model.train_on_batch) on "
                           "synthetic data.");
  apps::require_one_of(FLAGS_model, train_model_names());
  apps::require_one_of(FLAGS_device, {"cpu", "gpu"});
  apps::require_one_of(FLAGS_dtype, {"fp32", "bf16", "fp16"});
  apps::require_one_of(FLAGS_optimizer, {"", "sgd", "sgd_momentum", "adam"});
  apps::require_one_of(FLAGS_loop, {"fit", "train_on_batch"});
  apps::require_one_of(FLAGS_strategy,
                       {"off", "one_device", "mirrored", "central_storage", "multi_worker_mirrored"});
  Options o;
  o.model = absl::GetFlag(FLAGS_model), o.device = absl::GetFlag(FLAGS_device);
  o.dtype = absl::GetFlag(FLAGS_dtype), o.optimizer = absl::GetFlag(FLAGS_optimizer);
  o.loop = absl::GetFlag(FLAGS_loop), o.strategy = absl::GetFlag(FLAGS_strategy);
  o.batch = absl::GetFlag(FLAGS_batch).value, o.steps = absl::GetFlag(FLAGS_steps).value;
  o.warmup = absl::GetFlag(FLAGS_warmup).value;
  o.sync_every = absl::GetFlag(FLAGS_sync_every).value;
  o.epoch_samples = absl::GetFlag(FLAGS_epoch_samples).value;
  o.replicas = absl::GetFlag(FLAGS_replicas).value;
  o.epoch = absl::GetFlag(FLAGS_epoch);
  o.phases = absl::GetFlag(FLAGS_phases);
  if (o.phases < 0 || o.phases > 100000) throw apps::FlagError("--phases must be in [0, 100000]");
  if (o.phases > 0 && o.strategy != "off") {
    throw apps::FlagError("--phases times one device's step parts: use it with --strategy off");
  }
  if (o.replicas > 1 && o.strategy != "mirrored" && o.strategy != "central_storage" &&
      o.strategy != "multi_worker_mirrored") {
    throw apps::FlagError(
        "--replicas > 1 needs --strategy mirrored, central_storage or multi_worker_mirrored");
  }
  if (o.device == "gpu") require_gpus(o.replicas);
  return o;
}

// --dtype: Keras' mixed-precision policy name.
std::string policy_for(const std::string& dtype) {
  if (dtype == "bf16") return "mixed_bfloat16";
  if (dtype == "fp16") return "mixed_float16";
  return "float32";
}

// "/gpu:0 (NVIDIA H100 80GB HBM3)", "/cpu:0 (2 threads)".
std::string describe_devices(const std::vector<Device>& devices) {
  std::string text;
  for (const Device& d : devices) {
    if (!text.empty()) text += ", ";
    text += d.to_string();
    if (d.type == DeviceType::kCUDA) text += " (" + gpu::properties(d.index).name + ")";
  }
  if (!devices.empty() && devices[0].type == DeviceType::kCPU) {
    text += " (" + std::to_string(get_num_threads()) + " threads)";
  }
  return text;
}

std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The timed part of a run: step times and the loss at its ends.
struct TimedRun {
  StepTimes times;
  double first_loss = 0;  // the first warm-up step's (the first timed step's without warm-up)
  double last_loss = 0;
  const char* last_loss_is = "last step";
};

// Warm-up steps, then the timed steps or epoch of `o` on the synthetic batch (x, y).
TimedRun train_and_time(const BenchModel& m, const Options& o, const std::vector<Device>& devices,
                        const Tensor& x, const Tensor& y, int64_t samples) {
  TimedRun run;
  for (int64_t i = 0; i < o.warmup; ++i) {
    const Logs logs = m.model->train_on_batch(x, y);
    if (i == 0) run.first_loss = logs.at("loss");
  }
  const Tensor x_epoch = o.epoch ? synthetic_images(m, samples, 3, Device::cpu()) : Tensor();
  const Tensor y_epoch = o.epoch ? synthetic_labels(m, samples, 4, Device::cpu()) : Tensor();
  if (o.epoch && o.warmup > 0 && samples % o.batch != 0) {
    // The epoch's last, smaller batch is a new shape (new kernels, algorithm searches): warm it
    // up too, so the timed epoch runs the steady state.
    const int64_t rest = samples % o.batch;
    m.model->train_on_batch(x_epoch.slice(0, rest), y_epoch.slice(0, rest));
  }

  if (o.fit_loop()) {
    auto timer = std::make_shared<StepTimer>(devices);
    FitOptions fit = FitOptions().batch_size(o.batch).epochs(1).verbose(0).callbacks({timer});
    timer->start();
    const History history = o.epoch ? m.model->fit(x_epoch, y_epoch, fit.shuffle(true))
                                    : m.model->fit(x, y, fit.steps_per_epoch(o.steps).shuffle(false));
    run.times = timer->times();
    run.last_loss = history.history.at("loss").back();  // fit's epoch loss: the steps' mean
    run.last_loss_is = "mean of the timed steps";
    if (o.warmup == 0) run.first_loss = run.last_loss;
    return run;
  }
  synchronize(devices);
  for (int64_t i = 0; i < o.steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const Logs logs = m.model->train_on_batch(x, y);  // reads the loss: waits for the forward
    synchronize(devices);                             // ... and for the optimizer's update
    run.times.add(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), 1);
    run.last_loss = logs.at("loss");
    if (o.warmup == 0 && i == 0) run.first_loss = run.last_loss;
  }
  return run;
}

}  // namespace

int run_train(int argc, char** argv) {
  Options o;
  try {
    o = parse_options(argc, argv);
  } catch (const apps::FlagError& e) {
    std::fprintf(stderr, "strata_bench train: %s\n", e.what());
    return 2;
  }

  set_random_seed(42);
  // Before any layer exists: layers take the global policy when they are created, and compile()
  // wraps the optimizer in a LossScaleOptimizer under mixed_float16 (as Keras).
  mixed_precision::set_global_policy(policy_for(o.dtype));
  const auto build_start = std::chrono::steady_clock::now();
  // Declared before the model: it must outlive every step the model runs through it.
  const std::shared_ptr<distribute::Strategy> strategy = apps::make_strategy(
      o.strategy, o.on_gpu() ? 1 : int(o.replicas), o.on_gpu() ? int(o.replicas) : 0);
  const Device off_device = o.on_gpu() ? Device::gpu(0) : Device::cpu(0);
  const int n_replicas = strategy ? strategy->num_replicas_in_sync() : 1;
  // multi_worker_mirrored: --batch is each worker's; from here on o.batch is the global batch.
  const bool multi_worker = o.strategy == "multi_worker_mirrored";
  if (multi_worker) o.batch *= strategy->num_workers();
  // The library's ValueError when --batch does not split over the replicas.
  const std::string strategy_line = apps::describe_strategy(strategy.get(), o.batch, off_device);
  BenchModel m;
  {
    std::optional<distribute::Strategy::Scope> scope;
    std::optional<DeviceScope> placement;
    if (strategy) {
      scope.emplace(strategy->scope());
    } else {
      placement.emplace(off_device);
    }
    m = make_train_model(o.model, o.optimizer, o.steps_per_execution());
  }
  const std::vector<Device> devices =
      strategy ? strategy->worker_devices() : std::vector<Device>{off_device};
  // One device without a strategy: the synthetic batch lives there (no copy per step). Under a
  // strategy each step splits the global batch from the host over the replicas.
  const Device data_device = strategy ? Device::cpu(0) : off_device;
  const Tensor x = synthetic_images(m, o.batch, 1, data_device);
  const Tensor y = synthetic_labels(m, o.batch, 2, data_device);
  const int64_t samples = o.epoch_samples > 0 ? o.epoch_samples : m.epoch_samples;
  const ParamCounts params = count_params(*m.model);

  // "strategy mirrored, 2 replicas" or "strategy multi_worker_mirrored, 2 workers x 1 replica,
  // worker 0": named in the header and the samples/s line.
  const int local = strategy ? strategy->num_local_replicas() : 1;
  const std::string strategy_text =
      "strategy " + o.strategy + ", " +
      (multi_worker ? std::to_string(strategy->num_workers()) + " workers x " +
                          std::to_string(local) + (local == 1 ? " replica" : " replicas") +
                          ", worker " + std::to_string(strategy->worker_index())
                    : std::to_string(n_replicas) + (n_replicas == 1 ? " replica" : " replicas"));
  const std::string timed =
      o.epoch ? "1 timed epoch (" + std::to_string((samples + o.batch - 1) / o.batch) + " steps)"
              : std::to_string(o.steps) + " timed steps";
  std::printf("strata_bench train: model %s (%lld params), batch %lld, optimizer %s, %d threads, "
              "%lld warm-up + %s, %s\n",
              o.model.c_str(), static_cast<long long>(params.total),
              static_cast<long long>(o.batch), m.optimizer.c_str(), get_num_threads(),
              static_cast<long long>(o.warmup), timed.c_str(), strategy_text.c_str());
  std::printf("params            %s total, %s trainable\n", with_commas(params.total).c_str(),
              with_commas(params.trainable).c_str());
  std::printf("device            %s, dtype %s (policy %s%s)\n", describe_devices(devices).c_str(),
              o.dtype.c_str(), policy_for(o.dtype).c_str(),
              o.dtype == "fp16" ? ", dynamic loss scaling" : "");
  if (strategy) std::printf("strategy          %s\n", strategy_line.c_str());
  if (o.epoch) {
    std::printf("loop              model.fit, one epoch of %s host samples, shuffled; the host "
                "waits for the device every %d steps\n",
                with_commas(samples).c_str(), o.steps_per_execution());
  } else if (o.fit_loop()) {
    std::printf("loop              model.fit over the repeated batch (steps_per_execution %d): "
                "the host waits for the device every %d steps\n",
                o.steps_per_execution(), o.steps_per_execution());
  } else {
    std::printf("loop              model.train_on_batch: the host waits for the device after "
                "every step\n");
  }
  std::fflush(stdout);  // the header shows while the model warms up

  const TimedRun run = train_and_time(m, o, devices, x, y, samples);
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start).count();
  const double setup_s = total_s - run.times.total_ms() / 1e3;
  const int64_t timed_samples = o.epoch ? samples : o.batch * run.times.steps();

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  double load[3] = {0, 0, 0};
  const bool have_load = getloadavg(load, 3) == 3;

  std::printf("build + warm-up   %.2f s\n", setup_s);
  if (o.epoch) {
    std::printf("epoch             %.2f s (%s samples, %lld steps)\n", run.times.total_ms() / 1e3,
                with_commas(samples).c_str(), static_cast<long long>(run.times.steps()));
  }
  std::printf("samples/s         %.1f (%s)\n",
              double(timed_samples) / (run.times.total_ms() / 1e3), strategy_text.c_str());
  std::printf("ms/step           mean %.2f  median %.2f  best %.2f%s\n", run.times.mean(),
              run.times.median(), run.times.best(),
              o.steps_per_execution() > 1 ? " (median and best over groups of steps)" : "");
  std::printf("loss              %.4f (first step) -> %.4f (%s)\n", run.first_loss,
              run.last_loss, run.last_loss_is);
  std::printf("peak RSS          %.1f MB\n", double(usage.ru_maxrss) / 1024.0);
  for (const Device& d : devices) {
    if (d.type != DeviceType::kCUDA) continue;
    // The caching allocator's figure: the most bytes tensors held at once (its cache not counted).
    std::printf("peak GPU memory   %.1f MiB (%s, tensors in use at most)\n",
                double(config::get_memory_info(d).peak) / double(1 << 20), d.to_string().c_str());
  }
  if (have_load) std::printf("load average      %.2f %.2f %.2f\n", load[0], load[1], load[2]);
  if (o.phases > 0) {
    std::fflush(stdout);
    print_step_phases(*m.model, x, y, devices, o.phases);
  }
  return 0;
}

}  // namespace strata::bench

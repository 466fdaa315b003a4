// strata_allreduce_bench: all-reduce bandwidth across processes on the CPU, through Strata's
// GlooCommunicator (--impl strata) or through Gloo itself, as a program written straight against
// libgloo would do it (--impl gloo: FileStore + connectFullMesh + gloo::allreduce on the
// buffer), or both in the same processes, their timed loops interleaved (--impl both: the fair
// comparison on a shared machine). One process per rank, all started alike
// (bench/allreduce_compare.sh does, and runs bench/reference/torch_allreduce.py, PyTorch's Gloo
// backend, the same way):
//
//   strata_allreduce_bench --impl both --rank 0 --world 2 --dir /tmp/ar &
//   strata_allreduce_bench --impl both --rank 1 --world 2 --dir /tmp/ar
//
// Rank 0 prints one line per size: "RESULT <impl> <world> <bytes> <us per op> <algbw GB/s>
// <busbw GB/s>", algbw = bytes / time and busbw = algbw * 2 (world - 1) / world (nccl-tests'
// definitions: busbw is what each rank's link carried). Each size: warm-up ops, then the best of
// --reps timed loops of ops (min time: the machine is shared and noisy). float32 sums.
// Never a timed test: a benchmark.
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <functional>
#include <memory>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <strata/strata.h>

#include "distribute/cluster/coordination/folder_store.h"
#include "distribute/collectives/gloo/gloo_communicator.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string impl = "strata";
  int rank = 0;
  int world = 2;
  std::string dir;
  std::vector<size_t> sizes = {4096,    65536,    1 << 20,  4 << 20,
                               16 << 20, 64 << 20};  // bytes
  int reps = 3;
  std::optional<size_t> bcube_max_bytes;  // GlooOptions' default unless given
};

int usage() {
  std::fprintf(stderr,
               "usage: strata_allreduce_bench --impl strata|gloo|both --rank R --world N --dir DIR\n"
               "       [--sizes 4096,65536,...] [--reps 3] [--bcube_max_bytes B (0: ring only)]\n");
  return 2;
}

// Ops per timed loop: enough that the loop takes a while at small sizes, few at 64 MB.
int ops_for(size_t bytes) {
  return int(std::clamp<size_t>((size_t(256) << 20) / bytes, 5, 200));
}

// One implementation under test: buffer(n) makes the n floats all_reduce() then sums in place.
struct Impl {
  std::string name;
  std::function<float*(size_t n)> buffer;
  std::function<void()> all_reduce;
  std::function<void()> barrier;
};

// For every size: warm-up ops, then the best of `reps` timed loops per implementation, their
// loops interleaved (so that a busy moment of the shared machine hits both alike); rank 0
// prints the results.
void measure(const Args& args, const std::vector<Impl>& impls) {
  for (size_t bytes : args.sizes) {
    const size_t n = bytes / sizeof(float);
    const int ops = ops_for(bytes);
    std::vector<float*> data;
    for (const Impl& impl : impls) {
      data.push_back(impl.buffer(n));
      std::fill(data.back(), data.back() + n, float(args.rank + 1));
      for (int i = 0; i < 3; ++i) impl.all_reduce();  // warm-up: connections, pages
    }
    std::vector<double> best(impls.size(), 1e30);
    for (int rep = 0; rep < args.reps; ++rep) {
      for (size_t k = 0; k < impls.size(); ++k) {
        std::fill(data[k], data[k] + n, float(args.rank + 1));  // finite, whatever the op count
        impls[k].barrier();
        const auto start = Clock::now();
        for (int i = 0; i < ops; ++i) impls[k].all_reduce();
        const double t = std::chrono::duration<double>(Clock::now() - start).count() / ops;
        best[k] = std::min(best[k], t);
      }
    }
    for (size_t k = 0; k < impls.size() && args.rank == 0; ++k) {
      const double algbw = double(bytes) / best[k] / 1e9;
      const double busbw = algbw * 2.0 * (args.world - 1) / args.world;
      std::printf("RESULT %s %d %zu %.1f %.3f %.3f\n", impls[k].name.c_str(), args.world, bytes,
                  best[k] * 1e6, algbw, busbw);
      std::fflush(stdout);
    }
  }
}

// Strata: a GlooCommunicator's all_reduce on a float32 tensor (in place on its memory).
struct StrataSide {
  explicit StrataSide(const Args& args)
      : store(args.dir + "/strata"),
        comm(store, args.rank, args.world, options(args)) {}
  static strata::distribute::GlooOptions options(const Args& args) {
    strata::distribute::GlooOptions o;
    if (args.bcube_max_bytes) o.bcube_max_bytes = *args.bcube_max_bytes;
    return o;
  }
  Impl impl() {
    using namespace strata;
    return Impl{"strata",
                [this](size_t n) {
                  t = Tensor::empty(Shape{int64_t(n)}, float32, Device::cpu());
                  return static_cast<float*>(t.raw_data());
                },
                [this] { comm.all_reduce(t, ReduceOp::kSum); }, [this] { comm.barrier(); }};
  }
  strata::distribute::FolderStore store;
  strata::distribute::GlooCommunicator comm;
  strata::Tensor t;
};

// What a program written against libgloo alone does: FileStore, connectFullMesh, then
// gloo::allreduce on its buffer (PyTorch's ProcessGroupGloo runs the same call, with the same
// default algorithm: the ring).
struct GlooSide {
  explicit GlooSide(const Args& args)
      : store(args.dir + "/gloo"),
        context(std::make_shared<gloo::rendezvous::Context>(args.rank, args.world)) {
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    context->connectFullMesh(store, device);
  }
  Impl impl() {
    return Impl{"gloo",
                [this](size_t n) {
                  data.assign(n, 0.f);
                  return data.data();
                },
                [this] {
                  gloo::AllreduceOptions opts(context);
                  opts.setOutput(data.data(), data.size());
                  opts.setReduceFunction(
                      static_cast<void (*)(void*, const void*, const void*, size_t)>(
                          &gloo::sum<float>));
                  gloo::allreduce(opts);
                },
                [this] {
                  gloo::BarrierOptions opts(context);
                  gloo::barrier(opts);
                }};
  }
  gloo::rendezvous::FileStore store;
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::vector<float> data;
};

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return usage();
    const std::string value = argv[++i];
    if (flag == "--impl") args.impl = value;
    else if (flag == "--rank") args.rank = std::atoi(value.c_str());
    else if (flag == "--world") args.world = std::atoi(value.c_str());
    else if (flag == "--dir") args.dir = value;
    else if (flag == "--reps") args.reps = std::max(1, std::atoi(value.c_str()));
    else if (flag == "--bcube_max_bytes") args.bcube_max_bytes = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--sizes") {
      args.sizes.clear();
      for (size_t at = 0; at < value.size();) {
        size_t comma = value.find(',', at);
        if (comma == std::string::npos) comma = value.size();
        args.sizes.push_back(std::strtoull(value.substr(at, comma - at).c_str(), nullptr, 10));
        at = comma + 1;
      }
    } else {
      return usage();
    }
  }
  if (args.dir.empty() || (args.impl != "strata" && args.impl != "gloo" && args.impl != "both")) return usage();
  try {
    std::filesystem::create_directories(args.dir + "/strata");
    std::filesystem::create_directories(args.dir + "/gloo");
    std::unique_ptr<GlooSide> gloo_side;
    std::unique_ptr<StrataSide> strata_side;
    std::vector<Impl> impls;
    if (args.impl != "strata") {
      gloo_side = std::make_unique<GlooSide>(args);
      impls.push_back(gloo_side->impl());
    }
    if (args.impl != "gloo") {
      strata_side = std::make_unique<StrataSide>(args);
      impls.push_back(strata_side->impl());
    }
    measure(args, impls);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata_allreduce_bench rank %d: %s\n", args.rank, e.what());
    return 1;
  }
  return 0;
}

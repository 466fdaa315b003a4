#include "distribute/collectives/nccl/nccl_communicator.h"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "distribute/collectives/nccl/nccl_library.h"
#include "framework/backend/lazy_library.h"
#include "framework/cuda/cuda_context.h"

namespace strata::distribute {

static_assert(int(ncclSuccess) == kNcclSuccess && int(ncclInProgress) == kNcclInProgress,
              "nccl_comm_guard.h's status codes must be NCCL's");

namespace {

// The guard's table: the forwarders (nccl_forwarders.cc), statuses as int.
int get_async_error(ncclComm* comm, int* async_error) {
  ncclResult_t state = ncclSuccess;
  const ncclResult_t status = ncclCommGetAsyncError(comm, &state);
  *async_error = int(state);
  return int(status);
}
int abort_comm(ncclComm* comm) { return int(ncclCommAbort(comm)); }
int finalize_comm(ncclComm* comm) { return int(ncclCommFinalize(comm)); }
int destroy_comm(ncclComm* comm) { return int(ncclCommDestroy(comm)); }
const char* last_error(ncclComm* comm) { return ncclGetLastError(comm); }
const char* error_string(int status) { return ncclGetErrorString(ncclResult_t(status)); }

std::string rank_label(int rank, int world, Device device) {
  return "rank " + std::to_string(rank) + " of " + std::to_string(world) + " on " +
         device.to_string();
}

}  // namespace

const NcclCommCalls& nccl_comm_calls() {
  static const NcclCommCalls calls{get_async_error, abort_comm,   finalize_comm,
                                   destroy_comm,    last_error,   error_string};
  return calls;
}

NcclRank::NcclRank(int rank_in, int world_in, Device device_in)
    : rank(rank_in),
      world(world_in),
      device(device_in),
      guard(nccl_comm_calls(), rank_label(rank_in, world_in, device_in)) {}

void check_nccl(ncclResult_t status, const std::string& what, Device device, ncclComm_t comm,
                const std::string& fix) {
  if (status == ncclSuccess || status == ncclInProgress) return;
  // The texts come from NCCL itself; should they be out of reach, the status number remains.
  const std::string detail = library_text_or([&] { return ncclGetLastError(comm); }, "");
  throw CollectiveError("NCCL error in " + what + " on " + device.to_string() + ": " +
                        library_text_or([&] { return ncclGetErrorString(status); },
                                        "NCCL status " + std::to_string(int(status))) +
                        (detail.empty() ? "" : " (" + detail + ")") +
                        (fix.empty() ? "" : "; " + fix));
}

namespace {

ncclDataType_t nccl_type(DType dtype, const char* op) {
  switch (dtype) {
    case DType::kFloat32: return ncclFloat32;
    case DType::kFloat64: return ncclFloat64;
    case DType::kFloat16: return ncclFloat16;
    case DType::kBFloat16: return ncclBfloat16;
    case DType::kInt32: return ncclInt32;
    case DType::kInt64: return ncclInt64;
    case DType::kUInt8:
    case DType::kBool: return ncclUint8;
  }
  throw DTypeError(std::string("NCCL ") + op + ": unsupported dtype " + dtype_name(dtype));
}

ncclRedOp_t nccl_op(ReduceOp op, DType dtype) {
  if (dtype == DType::kBool) {
    throw DTypeError("NCCL all-reduce: bool tensors cannot be reduced; cast them first");
  }
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kMean: return ncclAvg;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
    case ReduceOp::kProd: return ncclProd;
    default: break;
  }
  throw ValueError("NCCL all-reduce: unsupported reduction; use sum, mean, max, min or prod");
}

// A collective queued on a rank's communication stream; `done` is recorded after it.
class NcclWork final : public Work {
 public:
  NcclWork(Device device, cudaEvent_t done, Tensor keep_alive)
      : device_(device), done_(done), keep_alive_(std::move(keep_alive)) {}
  ~NcclWork() override { cudaEventDestroy(done_); }  // released once the event completes
  // Orders the compute stream after the collective; the host does not block.
  void wait() override {
    cuda::DeviceGuard guard(device_);
    STRATA_CUDA_CHECK(cudaStreamWaitEvent(cuda::stream(device_), done_, 0), device_.index);
  }
  bool done() const override { return cudaEventQuery(done_) == cudaSuccess; }

 private:
  Device device_;
  cudaEvent_t done_;
  Tensor keep_alive_;
};

class NcclCommunicator final : public Communicator {
 public:
  explicit NcclCommunicator(std::shared_ptr<NcclRank> r) : r_(std::move(r)) {}
  int rank() const override { return r_->rank; }
  int world_size() const override { return r_->world; }

  void all_reduce(Tensor& t, ReduceOp op) override { all_reduce_async(t, op)->wait(); }

  std::shared_ptr<Work> all_reduce_async(Tensor t, ReduceOp op) override {
    check_tensor(t, "all_reduce");
    const ncclDataType_t type = nccl_type(t.dtype(), "all_reduce");
    const ncclRedOp_t red = nccl_op(op, t.dtype());
    return launch("ncclAllReduce", t, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclAllReduce(t.raw_data(), t.raw_data(), size_t(t.numel()), type, red, comm, s);
    });
  }

  void broadcast(Tensor& t, int root) override {
    check_tensor(t, "broadcast");
    if (root < 0 || root >= r_->world) {
      throw ValueError("NCCL broadcast: root " + std::to_string(root) + " is outside [0, " +
                       std::to_string(r_->world) + ")");
    }
    const ncclDataType_t type = nccl_type(t.dtype(), "broadcast");
    const size_t count = t.nbytes() / dtype_size(t.dtype());
    launch("ncclBroadcast", t, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclBroadcast(t.raw_data(), t.raw_data(), count, type, root, comm, s);
    })->wait();
  }

  Tensor all_gather(const Tensor& t) override {
    check_tensor(t, "all_gather");
    std::vector<int64_t> dims = t.shape().dims();
    if (dims.empty()) dims.push_back(1);
    dims[0] *= r_->world;
    Tensor out = Tensor::empty(Shape(dims), t.dtype(), t.device());
    const ncclDataType_t type = nccl_type(t.dtype(), "all_gather");
    launch("ncclAllGather", out, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclAllGather(t.raw_data(), out.raw_data(), size_t(t.numel()), type, comm, s);
    })->wait();
    return out;
  }

  Tensor reduce_scatter(const Tensor& t, ReduceOp op) override {
    check_tensor(t, "reduce_scatter");
    if (t.rank() == 0 || t.dim(0) % r_->world != 0) {
      throw ShapeError("NCCL reduce_scatter: dimension 0 of shape " + t.shape().to_string() +
                       " must divide by the " + std::to_string(r_->world) + " ranks");
    }
    std::vector<int64_t> dims = t.shape().dims();
    dims[0] /= r_->world;
    Tensor out = Tensor::empty(Shape(dims), t.dtype(), t.device());
    const ncclDataType_t type = nccl_type(t.dtype(), "reduce_scatter");
    const ncclRedOp_t red = nccl_op(op, t.dtype());
    launch("ncclReduceScatter", out, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclReduceScatter(t.raw_data(), out.raw_data(), size_t(out.numel()), type, red,
                               comm, s);
    })->wait();
    return out;
  }

  // Every rank's host thread returns only after all ranks' earlier work is done.
  void barrier() override {
    check_tensor(Tensor(), "barrier");
    Tensor token = Tensor::empty(Shape{1}, DType::kFloat32, r_->device);
    all_reduce(token, ReduceOp::kSum);
    cuda::synchronize(r_->device);
  }

 private:
  void throw_if_aborted(const char* op) const {
    if (r_->guard.closed()) {
      throw CollectiveError(std::string("NCCL ") + op + " on " + r_->device.to_string() +
                            ": the group was aborted (" + r_->guard.reason() + ")");
    }
  }

  void check_tensor(const Tensor& t, const char* op) const {
    throw_if_aborted(op);
    if (r_->connect) {
      r_->connect();
      throw_if_aborted(op);
    }
    if (t.defined() && t.device() != r_->device) {
      throw DeviceError(std::string("NCCL ") + op + " on rank " + std::to_string(r_->rank) +
                        ": the tensor lives on " + t.device().to_string() + ", the rank on " +
                        r_->device.to_string());
    }
  }

  // Queues `call(comm, stream)` on the communication stream after everything already queued on
  // the compute stream (the tensor's producers, and earlier users of any memory the output
  // reuses). The NCCL call itself runs through the rank's guard: under its mutex, and awaited
  // (ncclInProgress) a poll at a time, so an abort() meanwhile fails it naming the reason.
  template <typename Call>
  std::shared_ptr<Work> launch(const char* what, const Tensor& keep_alive, Call&& call) {
    const Device device = r_->device;
    cuda::DeviceGuard guard(device);
    cudaEvent_t ready = nullptr, done = nullptr;
    STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), device.index);
    STRATA_CUDA_CHECK(cudaEventRecord(ready, cuda::stream(device)), device.index);
    STRATA_CUDA_CHECK(cudaStreamWaitEvent(r_->comm_stream, ready, 0), device.index);
    cudaEventDestroy(ready);
    const cudaStream_t stream = r_->comm_stream;
    r_->guard.run(
        what, [&](ncclComm* comm) { return int(call(comm, stream)); }, r_->failure_hint);
    STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), device.index);
    STRATA_CUDA_CHECK(cudaEventRecord(done, r_->comm_stream), device.index);
    return std::make_shared<NcclWork>(device, done, keep_alive);
  }

  std::shared_ptr<NcclRank> r_;
};

}  // namespace

std::shared_ptr<Communicator> make_nccl_communicator(std::shared_ptr<NcclRank> rank) {
  return std::make_shared<NcclCommunicator>(std::move(rank));
}

void abort_comms(const std::vector<ncclComm_t>& comms) {
  for (ncclComm_t c : comms) {
    if (c != nullptr) ncclCommAbort(c);
  }
}

void wait_until_connected(const std::vector<ncclComm_t>& comms,
                          std::chrono::steady_clock::time_point deadline,
                          const std::function<bool()>& stop, const ConnectFailure& fail) {
  for (size_t l = 0; l < comms.size(); ++l) {
    for (;;) {
      ncclResult_t state = ncclInProgress;
      const ncclResult_t queried = ncclCommGetAsyncError(comms[l], &state);
      if (queried != ncclSuccess) state = queried;
      if (state == ncclSuccess) break;
      const bool given_up = state != ncclInProgress || (stop && stop()) ||
                            std::chrono::steady_clock::now() > deadline;
      if (given_up) {
        const std::string last =
            state == ncclInProgress
                ? ""
                : library_text_or([&] { return ncclGetLastError(comms[l]); }, "");
        abort_comms(comms);
        fail(int(l), state, last);
        throw CollectiveError("NCCL set-up failed");  // fail() throws; never reached
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

void shut_down_ranks(const std::vector<std::shared_ptr<NcclRank>>& ranks, const std::string& reason,
                     std::chrono::milliseconds timeout) {
  // Work already queued finishes first (its tensors are released with the streams).
  for (const auto& rank : ranks) {
    if (!rank->guard.live()) continue;
    cuda::DeviceGuard guard(rank->device);
    cudaStreamSynchronize(rank->comm_stream);
  }
  // Finalizing is collective: every rank starts before any is waited for.
  for (const auto& rank : ranks) {
    cuda::DeviceGuard guard(rank->device);
    rank->guard.begin_shutdown(reason);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const auto& rank : ranks) {
    cuda::DeviceGuard guard(rank->device);
    rank->guard.end_shutdown(deadline);
  }
}

}  // namespace strata::distribute

#include "distribute/nccl/nccl_communicator.h"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "distribute/nccl/nccl_library.h"
#include "framework/backend/lazy_library.h"
#include "framework/cuda/cuda_context.h"

namespace strata::distribute {

bool NcclRank::mark_aborted(const std::string& why) {
  std::lock_guard<std::mutex> lock(reason_mutex);
  if (aborted) return false;
  abort_reason = why;
  aborted = true;
  return true;
}

std::string NcclRank::reason() {
  std::lock_guard<std::mutex> lock(reason_mutex);
  return abort_reason;
}

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
    return launch("ncclAllReduce", t, [&](cudaStream_t s) {
      return ncclAllReduce(t.raw_data(), t.raw_data(), size_t(t.numel()), type, red, r_->comm, s);
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
    launch("ncclBroadcast", t, [&](cudaStream_t s) {
      return ncclBroadcast(t.raw_data(), t.raw_data(), count, type, root, r_->comm, s);
    })->wait();
  }

  Tensor all_gather(const Tensor& t) override {
    check_tensor(t, "all_gather");
    std::vector<int64_t> dims = t.shape().dims();
    if (dims.empty()) dims.push_back(1);
    dims[0] *= r_->world;
    Tensor out = Tensor::empty(Shape(dims), t.dtype(), t.device());
    const ncclDataType_t type = nccl_type(t.dtype(), "all_gather");
    launch("ncclAllGather", out, [&](cudaStream_t s) {
      return ncclAllGather(t.raw_data(), out.raw_data(), size_t(t.numel()), type, r_->comm, s);
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
    launch("ncclReduceScatter", out, [&](cudaStream_t s) {
      return ncclReduceScatter(t.raw_data(), out.raw_data(), size_t(out.numel()), type, red,
                               r_->comm, s);
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
    if (r_->aborted) {
      throw CollectiveError(std::string("NCCL ") + op + ": the group was aborted (" +
                            r_->reason() + ")");
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

  // A nonblocking communicator's call that returned ncclInProgress (NCCL connecting to the
  // peers on first use) completes in the background: its outcome, once known, or the abort.
  ncclResult_t settle(ncclResult_t status, const char* what) const {
    while (status == ncclInProgress) {
      if (r_->aborted) {
        throw CollectiveError(std::string("NCCL ") + what + ": the group was aborted (" +
                              r_->reason() + ")");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      ncclResult_t state = ncclSuccess;
      const ncclResult_t queried = ncclCommGetAsyncError(r_->comm, &state);
      status = queried != ncclSuccess ? queried : state;
    }
    return status;
  }

  // Queues `call` on the communication stream after everything already queued on the compute
  // stream (the tensor's producers, and earlier users of any memory the output reuses).
  template <typename Call>
  std::shared_ptr<Work> launch(const char* what, const Tensor& keep_alive, Call&& call) {
    const Device device = r_->device;
    cuda::DeviceGuard guard(device);
    cudaEvent_t ready = nullptr, done = nullptr;
    STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), device.index);
    STRATA_CUDA_CHECK(cudaEventRecord(ready, cuda::stream(device)), device.index);
    STRATA_CUDA_CHECK(cudaStreamWaitEvent(r_->comm_stream, ready, 0), device.index);
    cudaEventDestroy(ready);
    ncclResult_t status = call(r_->comm_stream);
    if (r_->nonblocking) status = settle(status, what);
    check_nccl(status, what, device, r_->comm,
               r_->nonblocking ? "another worker may have failed (see its log), or the workers "
                                 "cannot reach each other (NCCL_DEBUG=INFO shows why)"
                               : "");
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

}  // namespace strata::distribute

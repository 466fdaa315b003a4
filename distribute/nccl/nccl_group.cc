#include "distribute/nccl/nccl_group.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>

#include "distribute/nccl/nccl_library.h"
#include "distribute/nccl_support.h"
#include "framework/backend/lazy_library.h"
#include "framework/cuda/cuda_context.h"

namespace strata::distribute {
namespace {

void check_nccl(ncclResult_t status, const char* what, Device device, ncclComm_t comm = nullptr) {
  if (status == ncclSuccess || status == ncclInProgress) return;
  // The texts come from NCCL itself; should they be out of reach, the status number remains.
  const std::string detail = library_text_or([&] { return ncclGetLastError(comm); }, "");
  throw CollectiveError(std::string("NCCL error in ") + what + " on " + device.to_string() + ": " +
                        library_text_or([&] { return ncclGetErrorString(status); },
                                        "NCCL status " + std::to_string(int(status))) +
                        (detail.empty() ? "" : " (" + detail + ")"));
}

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

}  // namespace

struct NcclGroup::Rank {
  int rank = 0, world = 1;
  Device device;
  ncclComm_t comm = nullptr;
  cudaStream_t comm_stream = nullptr;
  std::atomic<bool> aborted{false};
  std::mutex reason_mutex;
  std::string abort_reason;
};

namespace {

class NcclCommunicator final : public Communicator {
 public:
  explicit NcclCommunicator(std::shared_ptr<NcclGroup::Rank> r) : r_(std::move(r)) {}
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
    Tensor token = Tensor::empty(Shape{1}, DType::kFloat32, r_->device);
    all_reduce(token, ReduceOp::kSum);
    cuda::synchronize(r_->device);
  }

 private:
  void check_tensor(const Tensor& t, const char* op) const {
    if (r_->aborted) {
      std::lock_guard<std::mutex> lock(r_->reason_mutex);
      throw CollectiveError(std::string("NCCL ") + op + ": the group was aborted (" +
                            r_->abort_reason + ")");
    }
    if (t.device() != r_->device) {
      throw DeviceError(std::string("NCCL ") + op + " on rank " + std::to_string(r_->rank) +
                        ": the tensor lives on " + t.device().to_string() + ", the rank on " +
                        r_->device.to_string());
    }
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
    check_nccl(call(r_->comm_stream), what, device, r_->comm);
    STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), device.index);
    STRATA_CUDA_CHECK(cudaEventRecord(done, r_->comm_stream), device.index);
    return std::make_shared<NcclWork>(device, done, keep_alive);
  }

  std::shared_ptr<NcclGroup::Rank> r_;
};

}  // namespace

NcclGroup::NcclGroup(std::vector<Device> devices) : devices_(std::move(devices)) {
  const int n = int(devices_.size());
  std::vector<int> ordinals;
  for (const Device& d : devices_) ordinals.push_back(d.index);
  std::vector<ncclComm_t> comms(size_t(n), nullptr);
  check_nccl(ncclCommInitAll(comms.data(), n, ordinals.data()), "ncclCommInitAll", devices_[0]);
  for (int r = 0; r < n; ++r) {
    auto rank = std::make_shared<Rank>();
    rank->rank = r;
    rank->world = n;
    rank->device = devices_[size_t(r)];
    rank->comm = comms[size_t(r)];
    cuda::DeviceGuard guard(rank->device);
    STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&rank->comm_stream, cudaStreamNonBlocking),
                      rank->device.index);
    ranks_.push_back(rank);
    communicators_.push_back(std::make_shared<NcclCommunicator>(rank));
  }
}

NcclGroup::~NcclGroup() {
  for (const auto& rank : ranks_) {
    cuda::DeviceGuard guard(rank->device);
    if (!rank->aborted) {
      cudaStreamSynchronize(rank->comm_stream);
      ncclCommDestroy(rank->comm);
    }
    cudaStreamDestroy(rank->comm_stream);
  }
}

void NcclGroup::abort(const std::string& reason) {
  for (const auto& rank : ranks_) {
    {
      std::lock_guard<std::mutex> lock(rank->reason_mutex);
      if (rank->aborted) continue;
      rank->abort_reason = reason;
    }
    rank->aborted = true;
    // Ends the rank's in-flight collectives (kernels waiting for a peer that will never come).
    ncclCommAbort(rank->comm);
  }
}

std::shared_ptr<Communicator> NcclGroup::communicator(int rank) {
  if (rank < 0 || rank >= world_size()) {
    throw ValueError("NcclGroup::communicator: rank " + std::to_string(rank) + " is outside [0, " +
                     std::to_string(world_size()) + ")");
  }
  return communicators_[size_t(rank)];
}

bool nccl_available() { return true; }

std::string nccl_version() {
  if (!nccl_library().available()) return "";  // loads libnccl: only strata-info asks
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "";
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." +
         std::to_string(v % 100);
}

std::unique_ptr<CommunicatorGroup> make_nccl_group(const std::vector<Device>& devices) {
  if (devices.empty()) throw ValueError("NcclAllReduce: no devices");
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].type != DeviceType::kCUDA) {
      throw ValueError("NcclAllReduce: device " + devices[i].to_string() +
                       " is not a GPU; NCCL all-reduces across GPUs (use ReductionToOneDevice "
                       "for CPU devices)");
    }
    cuda::check_device(devices[i]);
    for (size_t j = 0; j < i; ++j) {
      if (devices[j] == devices[i]) {
        throw ValueError("NcclAllReduce: device " + devices[i].to_string() + " is listed twice");
      }
    }
  }
  return std::make_unique<NcclGroup>(devices);
}

}  // namespace strata::distribute

#include "framework/strategy/batch_split.h"

#include <string>

#include "framework/core/error.h"
#include "framework/ops/shape_ops.h"

namespace strata::distribute {

int64_t InputContext::get_per_replica_batch_size(int64_t global_batch_size) const {
  if (num_replicas_in_sync < 1 || global_batch_size % num_replicas_in_sync != 0) {
    throw ValueError("InputContext.get_per_replica_batch_size: the global batch size " +
                     std::to_string(global_batch_size) + " is not divisible by the " +
                     std::to_string(num_replicas_in_sync) +
                     " replicas in sync; use a multiple of the replica count");
  }
  return global_batch_size / num_replicas_in_sync;
}

DistributedBatch split_batch(const data::Element& batch, const std::vector<Device>& devices,
                             int64_t expected_global, const char* who,
                             const InputContext& context) {
  const int64_t local = int64_t(devices.size());
  const int64_t workers = context.num_input_pipelines;
  const int64_t worker = context.input_pipeline_id;
  if (local < 1) throw ValueError(std::string(who) + ": the strategy has no replicas");
  STRATA_CHECK(workers >= 1 && worker >= 0 && worker < workers);
  const int64_t n = local * workers;
  if (batch.empty() || !batch[0].defined() || batch[0].rank() == 0) {
    throw ValueError(std::string(who) + ": a batch to split over replicas must hold tensors "
                     "with a batch axis (axis 0)");
  }
  const int64_t global = batch[0].dim(0);
  for (size_t k = 1; k < batch.size(); ++k) {
    if (!batch[k].defined()) continue;
    if (batch[k].rank() == 0 || batch[k].dim(0) != global) {
      throw ShapeError(std::string(who) + ": the tensors of a batch disagree on the batch size: "
                       "component 0 has " + std::to_string(global) + " samples, component " +
                       std::to_string(k) + " has shape " + batch[k].shape().to_string());
    }
  }
  if (global == 0) throw ValueError(std::string(who) + ": got an empty batch");
  const int64_t full = expected_global > 0 ? expected_global : global;
  if (expected_global >= 0 && (global > full || (global == full && global % n != 0))) {
    throw ValueError(std::string(who) + ": the global batch size " + std::to_string(global) +
                     " does not divide evenly over the " + std::to_string(n) +
                     " replicas in sync; use a batch size that is a multiple of " +
                     std::to_string(n) + " (e.g. " + std::to_string((global / n + 1) * n) + ")");
  }
  DistributedBatch out;
  out.global_size = global;
  const int64_t base = global / n, extra = global % n;
  int64_t start = 0;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t size = base + (r < extra ? 1 : 0);
    const int64_t local_r = r - worker * local;
    if (local_r >= 0 && local_r < local) {
      // A replica with no samples computes on the batch's first sample and counts for nothing.
      const int64_t b = size > 0 ? start : 0, e = size > 0 ? start + size : 1;
      data::Element part;
      part.reserve(batch.size());
      for (const Tensor& t : batch) {
        part.push_back(t.defined() ? t.slice(b, e).to(devices[size_t(local_r)]) : t);
      }
      out.per_replica.push_back(std::move(part));
      out.sizes.push_back(size);
      out.fractions.push_back(double(size) / double(global));
    }
    start += size;
  }
  return out;
}

namespace {

// Global batches from a source, split; the first batch fixes the global batch size unless the
// options give it.
class SplittingIterator final : public DistributedIterator {
 public:
  SplittingIterator(BatchSource source, std::vector<Device> devices, const InputOptions& options,
                    const InputContext& context)
      : source_(std::move(source)), devices_(std::move(devices)), options_(options),
        context_(context) {}
  std::optional<DistributedBatch> next() override {
    std::optional<data::Element> batch = source_();
    if (!batch) return std::nullopt;
    // A first batch smaller than the worker count would leave some worker without a single
    // sample in every step: a dataset batched too small for this cluster.
    const int64_t workers = context_.num_input_pipelines;
    if (first_ && workers > 1 && !batch->empty() && (*batch)[0].defined() &&
        (*batch)[0].rank() > 0 && (*batch)[0].dim(0) < workers) {
      throw ValueError(std::string(options_.who) + ": the global batch of " +
                       std::to_string((*batch)[0].dim(0)) + " sample(s) leaves worker " +
                       std::to_string(workers - 1) + " of " + std::to_string(workers) +
                       " without data; batch the dataset with at least one sample per replica "
                       "in sync (the global batch size)");
    }
    first_ = false;
    DistributedBatch out =
        split_batch(*batch, devices_, options_.global_batch_size, options_.who, context_);
    if (options_.global_batch_size == 0) options_.global_batch_size = out.global_size;
    return out;
  }

 private:
  BatchSource source_;
  std::vector<Device> devices_;
  InputOptions options_;
  InputContext context_;
  bool first_ = true;
};

}  // namespace

std::unique_ptr<DistributedIterator> make_splitting_iterator(BatchSource source,
                                                             std::vector<Device> devices,
                                                             const InputOptions& options,
                                                             const InputContext& context) {
  return std::make_unique<SplittingIterator>(std::move(source), std::move(devices), options,
                                             context);
}

Tensor concat_replica_outputs(const std::vector<Tensor>& outputs, const DistributedBatch& batch) {
  std::vector<Tensor> parts;
  for (size_t r = 0; r < outputs.size(); ++r) {
    if (batch.sizes[r] > 0) parts.push_back(outputs[r].to(outputs[0].device()));
  }
  return parts.size() == 1 ? parts[0] : concat(parts, 0);
}

}  // namespace strata::distribute

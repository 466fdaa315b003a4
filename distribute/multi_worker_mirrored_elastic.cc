// MultiWorkerMirroredStrategy's elastic steps (CommunicationOptions::elastic): a training step
// that fails because a worker left is run again by the workers left, from the furthest state
// any of them reached; a worker that joins is brought to that state at a step boundary.
//
// Why a snapshot per step: a step that fails part-way has already changed some state on the
// worker running it (its metric sums, or its variables when only the step's last exchange
// failed), and one survivor may have completed the step another did not (a collective can
// complete on some ranks and fail on others). Each worker therefore keeps its state as of the
// start of its step in flight; after re-forming, the members agree on the furthest completed
// step and every member loads the snapshot of a worker that reached it. That snapshot is a
// state every survivor would have reached: steps are synchronous, so no worker is more than
// one step ahead of another.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <string>

#include "distribute/cluster/coordination/coordination_client.h"
#include "distribute/errors.h"
#include "distribute/multi_worker_mirrored_elastic.h"
#include "distribute/variables/replicated_variable.h"
#include "distribute/worker_cluster.h"
#include "framework/autograd/grad_mode.h"
#include "framework/core/random.h"
#include "framework/ops/creation.h"
#include "framework/ops/shape_ops.h"
#include "framework/strategy/batch_split.h"

namespace strata::distribute {
namespace {

constexpr const char* kElasticWho = "MultiWorkerMirroredStrategy (elastic)";
constexpr int64_t kMaxPositionWords = int64_t(1) << 20;

int64_t bits_of(double v) {
  int64_t w;
  std::memcpy(&w, &v, sizeof w);
  return w;
}

double double_of(int64_t w) {
  double v;
  std::memcpy(&v, &w, sizeof v);
  return v;
}

// Whether a step failed the way a worker leaving makes it fail (a collective that could not
// complete), rather than with the program's own error, which every worker meets alike.
bool is_collective_failure(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const CoordinationError&) {
    return true;
  } catch (const CollectiveError&) {
    return true;
  } catch (...) {
    return false;
  }
}

std::string message_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an unknown error";
  }
}

// A step's batches drawn from the source: one (the global batch), or, keeping the per-replica
// batch (ElasticOptions::keep_per_replica_batch), one per replica in sync (fewer at the end of
// the pass). A step run again by fewer replicas gives the batches it no longer needs back,
// first in line for the next step; one run by more draws more. Shared by the iterator and the
// batches it made (DistributedBatch::redraw).
class StepDraws {
 public:
  explicit StepDraws(BatchSource source) : source_(std::move(source)) {}

  // The next step's rows from `batches` batches; null at the end of the pass.
  std::shared_ptr<const data::Element> draw(int batches) {
    ++draws_;
    drawn_.clear();
    take(size_t(batches));
    return drawn_.empty() ? nullptr : rows();
  }
  // The rows of draw number `draw` again for `replicas` replicas; null when a later draw was
  // made since (only the step in flight can be drawn again).
  std::shared_ptr<const data::Element> redraw(uint64_t draw, int replicas) {
    if (draw != draws_) return nullptr;
    while (drawn_.size() > size_t(replicas) && drawn_.size() > 1) {
      held_.push_front(std::move(drawn_.back()));
      drawn_.pop_back();
    }
    if (drawn_.size() < size_t(replicas)) take(size_t(replicas) - drawn_.size());
    return rows();
  }
  uint64_t draws() const { return draws_; }
  // Source batches drawn and not finished with: the step in flight's and those given back.
  int64_t ahead() const { return int64_t(held_.size() + drawn_.size()); }

 private:
  void take(size_t n) {
    for (; n > 0; --n) {
      if (!held_.empty()) {
        drawn_.push_back(std::move(held_.front()));
        held_.pop_front();
      } else if (std::optional<data::Element> batch = source_()) {
        drawn_.push_back(std::move(*batch));
      } else {
        return;  // the end of the pass
      }
    }
  }
  // The drawn batches end to end (a component undefined in the first is left undefined).
  std::shared_ptr<const data::Element> rows() const {
    if (drawn_.size() == 1) return std::make_shared<const data::Element>(drawn_.front());
    NoGradGuard no_grad;
    data::Element out;
    for (size_t c = 0; c < drawn_.front().size(); ++c) {
      if (!drawn_.front()[c].defined()) {
        out.push_back(Tensor());
        continue;
      }
      std::vector<Tensor> parts;
      for (const data::Element& batch : drawn_) {
        if (c >= batch.size() || !batch[c].defined()) {
          throw ValueError(std::string(kElasticWho) + ": the input's batches differ in their "
                           "components (one has " + std::to_string(batch.size()) + ", the first " +
                           std::to_string(drawn_.front().size()) + "); keeping the per-replica "
                           "batch joins several batches into a step's rows, so every batch must "
                           "have the same components");
        }
        parts.push_back(batch[c]);
      }
      out.push_back(concat(parts, 0));
    }
    return std::make_shared<const data::Element>(std::move(out));
  }

  BatchSource source_;
  std::deque<data::Element> held_;
  std::vector<data::Element> drawn_;
  uint64_t draws_ = 0;
};

// Splits each step's rows for the current members (input_context()), keeping them so that a
// step run again after the members changed can split them anew: the global batch as it is, or
// (keeping the per-replica batch) one source batch per replica, drawn again.
class ElasticSplittingIterator final : public DistributedIterator {
 public:
  ElasticSplittingIterator(Strategy* strategy, BatchSource source, const char* who,
                           std::function<uint64_t()> generation, bool per_replica)
      : strategy_(strategy),
        draws_(std::make_shared<StepDraws>(std::move(source))),
        per_replica_(per_replica),
        who_(who),
        generation_(std::move(generation)) {}
  std::optional<DistributedBatch> next() override {
    std::shared_ptr<const data::Element> rows =
        draws_->draw(per_replica_ ? strategy_->num_replicas_in_sync() : 1);
    if (!rows) return std::nullopt;
    // Split as evenly as it goes (-1): the global batch need not divide by every worker count
    // the job passes through; each replica's fraction keeps the step's mathematics.
    DistributedBatch out = strategy_->split_batch(*rows, -1, who_);
    out.global = std::move(rows);
    out.split_for = generation_();
    if (per_replica_) {
      out.redraw = [draws = draws_, draw = draws_->draws(), strategy = strategy_] {
        return draws->redraw(draw, strategy->num_replicas_in_sync());
      };
    }
    return out;
  }
  int64_t batches_ahead() const override { return draws_->ahead(); }

 private:
  Strategy* strategy_;
  std::shared_ptr<StepDraws> draws_;
  bool per_replica_;
  const char* who_;
  std::function<uint64_t()> generation_;
};

}  // namespace

void MultiWorkerMirroredStrategy::track_for_elastic(std::shared_ptr<ReplicatedVariable> v) {
  std::lock_guard<std::mutex> lock(elastic_->variables_mutex);
  elastic_->variables.push_back(std::move(v));
}

MultiWorkerMirroredStrategy::ElasticCounts MultiWorkerMirroredStrategy::elastic_counts() const {
  if (!elastic_) return ElasticCounts{};
  ElasticCounts counts = elastic_->counts;
  counts.generation = cluster_->generation();
  counts.generation_seen = cluster_->generation_seen();
  return counts;
}

void MultiWorkerMirroredStrategy::set_elastic_synchronization_hook(std::function<void()> hook) {
  if (elastic_) elastic_->synchronization_hook = std::move(hook);
}

namespace {

std::vector<std::shared_ptr<ReplicatedVariable>> live_variables(
    std::mutex& mutex, std::vector<std::weak_ptr<ReplicatedVariable>>& variables) {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<std::shared_ptr<ReplicatedVariable>> live;
  std::vector<std::weak_ptr<ReplicatedVariable>> kept;
  for (const auto& weak : variables) {
    if (auto v = weak.lock()) {
      live.push_back(v);
      kept.push_back(weak);
    }
  }
  variables = std::move(kept);
  return live;
}

}  // namespace

std::vector<int64_t> MultiWorkerMirroredStrategy::loop_position() const {
  const LoopPosition* position = elastic_->position();
  return position ? position->save() : std::vector<int64_t>();
}

void MultiWorkerMirroredStrategy::take_snapshot(std::vector<int64_t> position) {
  Elastic& e = *elastic_;
  e.snapshot_position = std::move(position);
  e.snapshot.clear();
  NoGradGuard no_grad;
  for (const auto& v : live_variables(e.variables_mutex, e.variables)) {
    // The cross-replica value: a mirrored variable's copy (equal between steps), a metric's
    // sum over every worker.
    e.snapshot.push_back(v->value().to(Device::cpu()).clone());
  }
  e.snapshot_generator = get_generator_state();
}

namespace {

// How many words a synchronization sends of a snapshot: one per value, two for the generator.
int64_t snapshot_word_count(const std::vector<Tensor>& values) {
  int64_t words = 2;
  for (const Tensor& value : values) words += value.numel();
  return words;
}

// A snapshot as a synchronization sends it: every value as float64 bits, then the generator.
std::vector<int64_t> snapshot_words(const std::vector<Tensor>& values, GeneratorState generator) {
  std::vector<int64_t> words;
  for (const Tensor& value : values) {
    for (double x : value.cast(DType::kFloat64).to_vector<double>()) words.push_back(bits_of(x));
  }
  words.push_back(int64_t(generator.seed));
  words.push_back(int64_t(generator.offset));
  return words;
}

}  // namespace

void MultiWorkerMirroredStrategy::load_snapshot(const std::vector<int64_t>& words,
                                                size_t state_words) {
  Elastic& e = *elastic_;
  NoGradGuard no_grad;
  const int workers = num_workers();
  const int local = replicas_->size();
  size_t at = 0;
  for (const auto& v : live_variables(e.variables_mutex, e.variables)) {
    const int64_t n = v->shape().numel();
    STRATA_CHECK(at + size_t(n) + 2 <= state_words);  // the sizes were agreed before
    std::vector<double> values(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) values[size_t(k)] = double_of(words[at + size_t(k)]);
    at += size_t(n);
    const Tensor value = Tensor::from_vector<double>(values, v->shape()).cast(v->dtype());
    auto* metric = dynamic_cast<SyncOnReadVariable*>(v.get());
    if (metric != nullptr && metric->aggregation() == VariableAggregation::kSum) {
      // The job's sum: held by worker 0's first copy, seen by the others as theirs to add, so
      // the next step's exchange adds only what the steps add.
      if (worker_index() == 0) {
        metric->assign(value);
      } else {
        metric->assign(zeros_like(value));
        metric->set_other_workers(value, (workers - 1) * local);
      }
    } else {
      v->assign(value);  // outside a replica: every copy
    }
  }
  set_generator_state(GeneratorState{uint64_t(words[at]), uint64_t(words[at + 1])});
}

bool MultiWorkerMirroredStrategy::synchronize_members(bool reform) {
  Elastic& e = *elastic_;
  const auto timeout = std::chrono::milliseconds(int64_t(options_.timeout_seconds_ * 1000.0));
  const bool in_flight = e.in_step;   // the step this worker has in flight: completed + 1
  for (;;) {
    if (reform) {
      cluster_->reform(timeout);  // CoordinationError after the timeout, or once the job failed
      ++e.counts.reformations;
    }
    reform = true;  // a member lost during what follows: the next generation
    const int n = replicas_->size();
    replicas_->remake_group(ReplicaIds{worker_index() * n, num_workers() * n});
    e.reform_pending = false;
    try {
      std::shared_ptr<Communicator> comm = cluster_->communicator();
      // Each member: the steps it completed (-1: it holds no state of the job yet) and the
      // sizes of its snapshot. The furthest holds the job's state (the lowest rank, the chief,
      // among equals: at the start, the chief's initial values, as TensorFlow's).
      const std::vector<int64_t> all =
          comm->all_gather(Tensor::from_vector<int64_t>(
                               {e.synced ? e.completed : -1, snapshot_word_count(e.snapshot),
                                int64_t(e.snapshot_position.size())}))
              .to_vector<int64_t>();
      const int workers = num_workers();
      int source = 0;
      for (int w = 1; w < workers; ++w) {
        if (all[size_t(3 * w)] > all[size_t(3 * source)]) source = w;
      }
      for (int w = 0; w < workers; ++w) {
        if (all[size_t(3 * w + 1)] != all[size_t(3 * source + 1)]) {
          throw ValueError(std::string(kElasticWho) + ": the workers' models differ: " +
                           task_name(w) + " holds " + std::to_string(all[size_t(3 * w + 1)] - 2) +
                           " variable values, " + task_name(source) + " holds " +
                           std::to_string(all[size_t(3 * source + 1)] - 2) +
                           "; every worker of an elastic job must run the same program and "
                           "build the same model before its first step");
        }
      }
      // Equal to this worker's own snapshot size (checked above); the loop position is a few
      // words and a Dataset's state, far under this bound.
      const int64_t position_count = all[size_t(3 * source + 2)];
      if (position_count < 0 || position_count > kMaxPositionWords) {
        throw ValueError(std::string(kElasticWho) + ": " + task_name(source) + " announced a "
                         "loop position of " + std::to_string(position_count) + " words; at most " +
                         std::to_string(kMaxPositionWords) + " are expected: every worker must "
                         "run the same version of the program");
      }
      const size_t state_words = size_t(all[size_t(3 * source + 1)]);
      const size_t position_words = size_t(position_count);
      std::vector<int64_t> words;
      if (worker_index() == source) {
        words = snapshot_words(e.snapshot, e.snapshot_generator);
        words.insert(words.end(), e.snapshot_position.begin(), e.snapshot_position.end());
      } else {
        words.assign(state_words + position_words, 0);
      }
      if (e.synchronization_hook) e.synchronization_hook();
      Tensor payload = Tensor::from_vector<int64_t>(words);
      comm->broadcast(payload, source);
      words = payload.to_vector<int64_t>();
      const int64_t source_completed = std::max<int64_t>(all[size_t(3 * source)], 0);
      const bool joins_running_job = !e.synced && source_completed > 0;
      const bool taken_over = in_flight && e.synced && source_completed > e.completed;
      load_snapshot(words, state_words);
      e.completed = source_completed;
      e.synced = true;
      ++e.counts.synchronizations;
      if (taken_over) ++e.counts.steps_taken_over;
      if (joins_running_job && e.position() && position_words > 0) {
        e.position()->restore(std::vector<int64_t>(words.begin() + std::ptrdiff_t(state_words),
                                                 words.end()));
      }
      // Every member synchronizes alike, so all tell the hook the same count before the same
      // step (a joiner on its first synchronization).
      const int replicas = num_replicas_in_sync();
      if (options_.elastic_.on_replicas_changed_ && replicas != e.replicas_told) {
        e.replicas_told = replicas;
        options_.elastic_.on_replicas_changed_(replicas);
      }
      return taken_over;
    } catch (...) {
      const std::exception_ptr error = std::current_exception();
      if (!is_collective_failure(error) || !cluster_->known_error().empty()) {
        cluster_->report_error(task_name(worker_index()) + " failed: " + message_of(error));
        throw;
      }
      // A member left during the synchronization: the next generation, without it.
    }
  }
}

bool MultiWorkerMirroredStrategy::run_elastic_step(const std::function<void()>& step) {
  Elastic& e = *elastic_;
  // Workers join only at a training step's boundary (fit's validation has no place to join
  // at; a custom loop's steps are all training steps). Only a training step falls back on its
  // snapshot, so the other loops' steps (evaluate, predict) copy nothing.
  std::vector<int64_t> position = loop_position();
  const bool training = e.position() == nullptr || !position.empty();
  if (training || !e.synced) take_snapshot(std::move(position));
  if (!e.synced || (e.reform_pending && training)) {
    synchronize_members(/*reform=*/e.synced);
    take_snapshot(loop_position());
  }
  for (;;) {
    e.in_step = true;
    try {
      step();
      e.in_step = false;
      ++e.completed;
      ++e.counts.completed_steps;
      return true;
    } catch (...) {
      const std::exception_ptr error = std::current_exception();
      if (!is_collective_failure(error) || !cluster_->known_error().empty() || !training) {
        e.in_step = false;
        std::string why = message_of(error);
        if (!training && is_collective_failure(error)) {
          why += " (during evaluate, predict or fit's validation, which are not elastic yet: "
                 "the job ends; validate with the side-car evaluator instead)";
        }
        cluster_->report_error(task_name(worker_index()) + " failed: " + why);
        std::rethrow_exception(error);
      }
      bool taken_over = false;
      try {
        taken_over = synchronize_members(/*reform=*/true);
      } catch (...) {
        e.in_step = false;  // the job failed: later calls must not think a step is running
        throw;
      }
      e.in_step = false;
      if (taken_over) return false;
      take_snapshot(loop_position());
    }
  }
}

PerReplica MultiWorkerMirroredStrategy::run_step(
    const std::function<Tensor(const data::Element&)>& fn, const DistributedBatch& batch) {
  if (!elastic_ || elastic_->in_step) return Strategy::run_step(fn, batch);
  PerReplica out;
  const bool ran = run_elastic_step([&] {
    if (batch.global && batch.split_for != cluster_->generation()) {
      // The workers changed since the batch was split: this worker's part of it now (of the
      // rows drawn again for the replicas now in sync, when keeping the per-replica batch).
      std::shared_ptr<const data::Element> rows = batch.redraw ? batch.redraw() : nullptr;
      DistributedBatch again = split_batch(rows ? *rows : *batch.global, -1, "Model.fit");
      out = Strategy::run_step(fn, again);
    } else {
      out = Strategy::run_step(fn, batch);
    }
  });
  // A step another worker completed for this one returns no per-replica values.
  if (!ran) out.values.assign(size_t(num_local_replicas()), Tensor());
  return out;
}

std::unique_ptr<DistributedIterator> MultiWorkerMirroredStrategy::distribute_input(
    BatchSource source, const InputOptions& options) {
  if (!elastic_) return Strategy::distribute_input(std::move(source), options);
  WorkerCluster* cluster = cluster_.get();
  return std::make_unique<ElasticSplittingIterator>(
      this, std::move(source), options.who, [cluster] { return cluster->generation(); },
      options_.elastic_.keep_per_replica_batch_);
}

void MultiWorkerMirroredStrategy::enter_training_loop(const LoopPosition* position) {
  if (!elastic_) return;
  elastic_->loops.push_back(position);
  if (!elastic_->synced) {
    take_snapshot(loop_position());
    synchronize_members(/*reform=*/false);
  }
}

void MultiWorkerMirroredStrategy::leave_training_loop() {
  if (!elastic_ || elastic_->loops.empty()) return;
  elastic_->loops.pop_back();
}

}  // namespace strata::distribute

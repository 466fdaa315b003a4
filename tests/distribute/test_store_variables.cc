// A test strategy whose variables live in a separate "parameter store" and are reachable only
// through Variable's virtual entries (value / gather / apply_update / assign): what a
// parameter-server strategy plugs into. Plain fit() trains a Conv2D + Embedding + Dense model
// under it to the same weights as without a strategy, the optimizer only ever hands updates to
// the variables, and the embedding table serves only the rows a step touches.
#include <set>

#include "tests/distribute/conv_embedding_model.h"

namespace strata::testing {
namespace {

// What the store saw, per variable name.
struct StoreCounts {
  std::map<std::string, int64_t> full_reads, rows_served, updates, assigns;
  // Updates that arrived as rows (IndexedSlices), and how many rows they carried.
  std::map<std::string, int64_t> sparse_updates, rows_updated;
};

class StoreVariable final : public Variable {
 public:
  StoreVariable(const VariableSpec& spec, StoreCounts& counts)
      : Variable(spec, NoStorage{}), backing_(std::make_shared<Variable>(spec)), counts_(counts) {}

  Device device() const override { return backing_->device(); }
  Tensor value() const override {
    ++counts_.full_reads[name()];
    return read();
  }
  Tensor gather(const Tensor& ids) const override {
    const std::vector<int64_t> v = ids.cast(DType::kInt64).to_vector<int64_t>();
    counts_.rows_served[name()] += int64_t(std::set<int64_t>(v.begin(), v.end()).size());
    return embedding_lookup(read(), ids);
  }
  void apply_update(const VariableUpdate& update, UpdateBatch& batch) override {
    ++counts_.updates[name()];
    if (update.grad.is_sparse()) {
      ++counts_.sparse_updates[name()];
      counts_.rows_updated[name()] += update.grad.slices().indices.numel();
    }
    // The store applies it to its own copies of the variable and its slots.
    VariableUpdate in_store = update;
    for (VariablePtr& slot : in_store.slots) slot = static_cast<StoreVariable&>(*slot).backing_;
    backing_->apply_update(in_store, batch);
  }
  void assign(const Tensor& v) override { ++counts_.assigns[name()]; backing_->assign(v); }
  void assign_add(const Tensor& d) override { ++counts_.assigns[name()]; backing_->assign_add(d); }
  void assign_sub(const Tensor& d) override { ++counts_.assigns[name()]; backing_->assign_sub(d); }
  Tensor gradient_handle() const override { return backing_->gradient_handle(); }

 private:
  // A read recorded as this variable's (its own trainable flag decides).
  Tensor read() const {
    const Tensor handle = backing_->gradient_handle();
    return make_read(storage_of(*backing_), handle.grad_node());
  }
  // The store's side; nothing outside this class reaches it.
  VariablePtr backing_;
  StoreCounts& counts_;
};

class StoreStrategy final : public distribute::Strategy {
 public:
  std::string name() const override { return "StoreStrategy"; }
  int num_replicas_in_sync() const override { return 1; }
  std::vector<Device> worker_devices() const override { return {Device::cpu()}; }
  void run_replicas(const std::function<void(int)>& fn) override { fn(0); }
  StoreCounts counts;

 protected:
  VariablePtr create_variable(const VariableSpec& spec, const NextCreator&) override {
    return std::make_shared<StoreVariable>(spec, counts);
  }
};

class StoreVariables : public ::testing::TestWithParam<std::string> {};

TEST_P(StoreVariables, FitMatchesNoStrategyThroughTheVariableEntriesOnly) {
  const auto options = FitOptions().epochs(2).verbose(0);
  std::shared_ptr<Model> plain = conv_embedding_model(GetParam());
  plain->fit(conv_embedding_data(), options);

  StoreStrategy strategy;
  std::shared_ptr<Model> stored;
  {
    auto scope = strategy.scope();
    stored = conv_embedding_model(GetParam());
  }
  std::string table;
  for (const VariablePtr& v : stored->trainable_variables()) {
    if (v->name().find("embedding") != std::string::npos) table = v->name();
  }
  ASSERT_FALSE(table.empty());
  strategy.counts = StoreCounts{};
  stored->fit(conv_embedding_data(), options);
  const StoreCounts c = strategy.counts;  // what fit did (get_weights below reads every value)
  expect_weights_near(stored->get_weights(), plain->get_weights(), 1e-6, 1e-7);

  const int64_t steps = 2 * kSamples / kBatch;
  // The optimizer handed each trainable variable one update per step, and nothing else wrote
  // them; the embedding table was never read whole, only its touched rows were served.
  for (const VariablePtr& v : stored->trainable_variables()) {
    EXPECT_EQ(c.updates.count(v->name()) ? c.updates.at(v->name()) : 0, steps) << v->name();
    EXPECT_EQ(c.assigns.count(v->name()), 0u) << v->name();
  }
  EXPECT_EQ(c.full_reads.count(table), 0u);
  ASSERT_TRUE(c.rows_served.count(table));
  // One lookup per training step (the first builds the metrics on one sample).
  EXPECT_GT(c.rows_served.at(table), 0);
  EXPECT_LE(c.rows_served.at(table), (steps + 1) * kUsedIds);
  // Its gradient reached it as the touched rows (deduplicated), never as a dense table, and
  // nothing else got a sparse gradient.
  ASSERT_TRUE(c.sparse_updates.count(table));
  EXPECT_EQ(c.sparse_updates.at(table), steps);
  EXPECT_GT(c.rows_updated.at(table), 0);
  EXPECT_LE(c.rows_updated.at(table), steps * kUsedIds);
  EXPECT_EQ(c.sparse_updates.size(), 1u);
}

// The table's rows are summed over the replicas and the rows any replica touched stay the
// touched rows, so Mirrored and CentralStorage update the same rows as one replica (with SGD
// momentum, an untouched row keeps its momentum).
TEST_P(StoreVariables, MirroredAndCentralStorageUpdateTheSameRowsAsNoStrategy) {
  config::set_logical_cpu_devices(2);
  const auto options = FitOptions().epochs(2).verbose(0);
  std::shared_ptr<Model> plain = conv_embedding_model(GetParam());
  plain->fit(conv_embedding_data(), options);
  distribute::MirroredStrategy mirrored(cpus(2));
  distribute::CentralStorageStrategy central(cpus(2));
  for (distribute::Strategy* strategy : {static_cast<distribute::Strategy*>(&mirrored),
                                         static_cast<distribute::Strategy*>(&central)}) {
    SCOPED_TRACE(strategy->name());
    std::shared_ptr<Model> model;
    {
      auto scope = strategy->scope();
      model = conv_embedding_model(GetParam());
    }
    model->fit(conv_embedding_data(), options);
    expect_weights_near(model->get_weights(), plain->get_weights(), 1e-5, 1e-6);
  }
  config::set_logical_cpu_devices(1);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, StoreVariables, ::testing::Values("sgd_momentum", "adam"));

}  // namespace
}  // namespace strata::testing

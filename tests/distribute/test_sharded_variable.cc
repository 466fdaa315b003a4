// ShardedVariable: shard shapes and names, values and gradients equal to an unsharded variable's,
// and a test strategy that shards every variable (over local variables reached only through
// their virtual entries, as parameter-server shards will be): fit() trains to the same weights
// as without it, the embedding table serves and updates only the touched rows, and weights saved
// under 3 shards load under 2 and unsharded.
#include <set>

#include "distribute/parameter_server/sharded_variable.h"
#include "tests/distribute/conv_embedding_model.h"
#include "tests/datasets/temp_dir.h"
#include "tests/distribute/distribute_test_utils.h"

namespace strata::testing {
namespace {

using distribute::ShardedVariable;

// What the shards saw, per shard name.
struct ShardCounts {
  std::map<std::string, int64_t> full_reads, rows_served, updates, sparse_updates, rows_updated;
};

// A shard reachable only through the virtual entries (the shape of a remote one), counting.
class CountingShard final : public Variable {
 public:
  CountingShard(const VariableSpec& spec, ShardCounts& counts)
      : Variable(spec, NoStorage{}), backing_(std::make_shared<Variable>(spec)), counts_(counts) {}

  Device device() const override { return backing_->device(); }
  Tensor value() const override {
    ++counts_.full_reads[name()];
    return backing_->value();
  }
  Tensor gather(const Tensor& ids) const override {
    const std::vector<int64_t> v = ids.cast(DType::kInt64).to_vector<int64_t>();
    counts_.rows_served[name()] += int64_t(std::set<int64_t>(v.begin(), v.end()).size());
    return backing_->gather(ids);
  }
  void apply_update(const VariableUpdate& update, UpdateBatch& batch) override {
    ++counts_.updates[name()];
    if (update.grad.is_sparse()) {
      ++counts_.sparse_updates[name()];
      counts_.rows_updated[name()] += update.grad.slices().indices.numel();
    }
    VariableUpdate local = update;
    for (VariablePtr& slot : local.slots) slot = static_cast<CountingShard&>(*slot).backing_;
    backing_->apply_update(local, batch);
  }
  void assign(const Tensor& v) override { backing_->assign(v); }
  void assign_add(const Tensor& d) override { backing_->assign_add(d); }
  void assign_sub(const Tensor& d) override { backing_->assign_sub(d); }
  Tensor gradient_handle() const override { return backing_->gradient_handle(); }

 private:
  VariablePtr backing_;
  ShardCounts& counts_;
};

// Shards every variable of rank >= 1 with >= 2 rows into `num_shards` (fewer for short ones).
class ShardingStrategy final : public distribute::Strategy {
 public:
  explicit ShardingStrategy(int64_t num_shards) : partitioner_(num_shards) {}
  std::string name() const override { return "ShardingStrategy"; }
  int num_replicas_in_sync() const override { return 1; }
  std::vector<Device> worker_devices() const override { return {Device::cpu()}; }
  void run_replicas(const std::function<void(int)>& fn) override { fn(0); }
  ShardCounts counts;

 protected:
  VariablePtr create_variable(const VariableSpec& spec, const NextCreator&) override {
    return distribute::create_sharded_variable(spec, partitioner_, [this](const VariableSpec& s) {
      return std::make_shared<CountingShard>(s, counts);
    });
  }

 private:
  distribute::FixedShardsPartitioner partitioner_;
};

VariablePtr plain(const VariableSpec& s) { return std::make_shared<Variable>(s); }

VariableSpec table_spec(int64_t rows = 10, int64_t cols = 3) {
  VariableSpec spec;
  spec.name = "table";
  spec.shape = Shape{rows, cols};
  spec.initializer = [](const Shape& shape, DType dtype) {
    return random_normal(shape, 0.0, 1.0, dtype, 5);
  };
  return spec;
}

TEST(ShardedVariableShapes, TenRowsOverThreeShardsAreFourThreeThreeNamedPartI) {
  const VariableSpec spec = table_spec();
  ShardedVariable v(spec, ShardedVariable::make_shards(spec, 3, plain));
  ASSERT_EQ(v.num_shards(), 3);
  EXPECT_EQ(v.shards()[0]->shape(), (Shape{4, 3}));
  EXPECT_EQ(v.shards()[1]->shape(), (Shape{3, 3}));
  EXPECT_EQ(v.shards()[2]->shape(), (Shape{3, 3}));
  EXPECT_EQ(v.shards()[0]->name(), "table/part_0");
  EXPECT_EQ(v.shards()[2]->name(), "table/part_2");
  EXPECT_EQ(v.shard_offsets(), (std::vector<int64_t>{0, 4, 7}));
  EXPECT_EQ(v.shape(), (Shape{10, 3}));
  // The initializer ran once for the whole shape: the same numbers as unsharded.
  EXPECT_EQ(v.value().to_vector<float>(), Variable(spec).value().to_vector<float>());
  EXPECT_EQ(v.shards()[1]->value().to_vector<float>(),
            Variable(spec).value().slice(4, 7).to_vector<float>());
}

TEST(ShardedVariableShapes, ShardsThatDoNotStackOrDifferInDtypeAreValueErrors) {
  const VariableSpec spec = table_spec();
  std::vector<VariablePtr> shards = ShardedVariable::make_shards(spec, 2, plain);
  shards.pop_back();
  EXPECT_THROW(ShardedVariable(spec, shards), ValueError);
  VariableSpec f64 = table_spec(5);
  f64.dtype = DType::kFloat64;
  f64.initializer = nullptr;
  std::vector<VariablePtr> mixed = ShardedVariable::make_shards(table_spec(5), 1, plain);
  mixed.push_back(plain(f64));
  EXPECT_THROW(ShardedVariable(spec, mixed), ValueError);
}

TEST(ShardedVariableShapes, AssignSplitsRowsAndCreatorLeavesSmallVariablesWhole) {
  const VariableSpec spec = table_spec();
  ShardedVariable v(spec, ShardedVariable::make_shards(spec, 3, plain));
  const Tensor x = random_normal({10, 3}, 0.0, 1.0, float32, 9);
  v.assign(x);
  EXPECT_EQ(v.value().to_vector<float>(), x.to_vector<float>());
  v.assign_sub(x);
  EXPECT_EQ(v.value().to_vector<float>(), std::vector<float>(30, 0.0f));
  const distribute::FixedShardsPartitioner three(3);
  VariableSpec scalar;
  scalar.name = "s";
  scalar.shape = Shape{};
  EXPECT_EQ(dynamic_cast<ShardedVariable*>(
                distribute::create_sharded_variable(scalar, three, plain).get()), nullptr);
  VariableSpec one_row = table_spec(1);
  EXPECT_EQ(dynamic_cast<ShardedVariable*>(
                distribute::create_sharded_variable(one_row, three, plain).get()), nullptr);
  // A slot follows its primary's shard shapes, whatever the partitioner says.
  VariablePtr primary = distribute::create_sharded_variable(spec, three, plain);
  VariableSpec slot = spec;
  slot.name = "slot";
  slot.colocate_with = primary.get();
  auto s = std::dynamic_pointer_cast<ShardedVariable>(
      distribute::create_sharded_variable(slot, distribute::FixedShardsPartitioner(2), plain));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->shard_offsets(), (std::vector<int64_t>{0, 4, 7}));
}

TEST(ShardedVariableGradients, ValueAndGatherGradientsMatchTheUnshardedVariables) {
  const VariableSpec spec = table_spec();
  auto whole = std::make_shared<Variable>(spec);
  auto sharded = std::make_shared<ShardedVariable>(spec, ShardedVariable::make_shards(spec, 3, plain));
  const Tensor w = random_normal({10, 3}, 0.0, 1.0, float32, 11);
  const Tensor ids = Tensor::from_vector<int64_t>({1, 8, 4, 8, 0, 9}, Shape{2, 3});
  const Tensor wr = random_normal({2, 3, 3}, 0.0, 1.0, float32, 12);
  for (bool slices : {false, true}) {
    SCOPED_TRACE(slices ? "gradient_with_slices" : "gradient");
    std::vector<Gradient> g;
    for (const VariablePtr& v : {VariablePtr(whole), VariablePtr(sharded)}) {
      GradientTape tape;
      const Tensor rows = v->gather(ids);
      const Tensor loss = add(reduce_sum(multiply(multiply(v->value(), v->value()), w)),
                              reduce_sum(multiply(rows, wr)));
      g.push_back(slices ? tape.gradient_with_slices(loss, {v})[0]
                         : Gradient(tape.gradient(loss, std::vector<VariablePtr>{v})[0]));
    }
    // (value() read too: the rows join the dense gradient, for both alike.)
    ASSERT_TRUE(g[1].defined());
    EXPECT_EQ(g[1].is_sparse(), g[0].is_sparse());
    expect_weights_near({g[1].to_dense()}, {g[0].to_dense()}, 1e-6, 1e-6);
    // Only gathered: the rows themselves, as sparse as the unsharded table's.
    std::vector<Gradient> r;
    for (const VariablePtr& v : {VariablePtr(whole), VariablePtr(sharded)}) {
      GradientTape tape;
      const Tensor loss = reduce_sum(multiply(v->gather(ids), wr));
      r.push_back(slices ? tape.gradient_with_slices(loss, {v})[0]
                         : Gradient(tape.gradient(loss, std::vector<VariablePtr>{v})[0]));
    }
    EXPECT_EQ(r[1].is_sparse(), slices);
    EXPECT_EQ(r[0].is_sparse(), slices);
    if (slices) {
      EXPECT_EQ(r[1].slices().indices.to_vector<int64_t>(), r[0].slices().indices.to_vector<int64_t>());
    }
    expect_weights_near({r[1].to_dense()}, {r[0].to_dense()}, 0.0, 0.0);
  }
}

// Under a mixed-precision layer's autocast the assembled value and rows are cast once (the
// shards are read as stored), and the gradient reaches the variable in its own dtype.
TEST(ShardedVariableGradients, AutocastReadsComeInTheComputeDtype) {
  const VariableSpec spec = table_spec();
  auto v = std::make_shared<ShardedVariable>(spec, ShardedVariable::make_shards(spec, 3, plain));
  const Tensor ids = Tensor::from_vector<int64_t>({9, 2}, Shape{2});
  GradientTape tape;
  Tensor loss;
  {
    mixed_precision::AutocastScope autocast(DType::kFloat16);
    const Tensor value = v->value(), rows = v->gather(ids);
    EXPECT_EQ(value.dtype(), DType::kFloat16);
    EXPECT_EQ(rows.dtype(), DType::kFloat16);
    EXPECT_EQ(v->shards()[0]->value().dtype(), DType::kFloat32);
    loss = add(reduce_sum(value.cast(float32)), reduce_sum(rows.cast(float32)));
  }
  const Tensor g = tape.gradient(loss, std::vector<VariablePtr>{v})[0];
  ASSERT_EQ(g.dtype(), DType::kFloat32);
  std::vector<float> expected(30, 1.0f);
  for (int64_t id : {9, 2}) {
    for (int64_t c = 0; c < 3; ++c) expected[size_t(id * 3 + c)] += 1.0f;
  }
  EXPECT_EQ(g.to_vector<float>(), expected);
}

TEST(ShardedVariableGradients, GradientShardsAreNotAccepted) {
  const VariableSpec spec = table_spec();
  ShardedVariable v(spec, ShardedVariable::make_shards(spec, 2, plain));
  EXPECT_FALSE(v.accepts_gradient_shards());
  VariableUpdate update;
  update.grad = Gradient::shard(zeros({5}, float32), 0, spec.shape);
  UpdateBatch batch;
  EXPECT_THROW(v.apply_update(update, batch), InternalError);
}

std::shared_ptr<Model> model_in(ShardingStrategy* strategy, const std::string& optimizer) {
  if (strategy == nullptr) return conv_embedding_model(optimizer);
  auto scope = strategy->scope();
  return conv_embedding_model(optimizer);
}

// Each batch looks up 12 consecutive rows (each twice) starting 17 rows after the last batch's:
// over 2 or 3 shards, a shard is touched in some steps and untouched in others (where SGD
// momentum must leave it alone and Adam must still decay its moments).
std::vector<int64_t> table_ids() {
  std::vector<int64_t> ids(size_t(kSamples * 3));
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t batch = int64_t(i) / (kBatch * 3), within = int64_t(i) % (kBatch * 3);
    ids[i] = (batch * 17 + within / 2) % kVocab;
  }
  return ids;
}

// Ids spread over the whole table (so that each shard is left out of some steps).
data::Dataset sharded_embedding_data() { return conv_embedding_data(table_ids()); }

class ShardedVariableFit : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(ShardedVariableFit, MatchesNoStrategyAndTheTableServesAndUpdatesOnlyTouchedRows) {
  const auto [optimizer, num_shards] = GetParam();
  const auto options = FitOptions().epochs(2).verbose(0);
  std::shared_ptr<Model> unsharded = model_in(nullptr, optimizer);
  unsharded->fit(sharded_embedding_data(), options);

  ShardingStrategy strategy(num_shards);
  std::shared_ptr<Model> model = model_in(&strategy, optimizer);
  std::shared_ptr<ShardedVariable> table;
  for (const VariablePtr& v : model->trainable_variables()) {
    auto s = std::dynamic_pointer_cast<ShardedVariable>(v);
    EXPECT_TRUE(s != nullptr || v->shape().rank() == 0 || v->shape()[0] < 2) << v->name();
    if (v->name().find("embedding") != std::string::npos) table = s;
  }
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->num_shards(), num_shards);
  strategy.counts = ShardCounts{};
  model->fit(sharded_embedding_data(), options);
  const ShardCounts c = strategy.counts;  // what fit did (get_weights below reads everything)
  expect_weights_near(model->get_weights(), unsharded->get_weights(), 1e-6, 1e-7);

  // Expected per shard, from the ids: the steps that touch it and the distinct rows they touch.
  const int64_t epochs = 2, batches = kSamples / kBatch;
  const std::vector<int64_t> ids = table_ids();
  const std::vector<int64_t>& offsets = table->shard_offsets();
  std::vector<int64_t> touched_steps(size_t(num_shards), 0), touched_rows(size_t(num_shards), 0);
  for (int64_t b = 0; b < batches; ++b) {
    const std::set<int64_t> rows(ids.begin() + b * kBatch * 3, ids.begin() + (b + 1) * kBatch * 3);
    std::vector<int64_t> per_shard(size_t(num_shards), 0);
    for (int64_t id : rows) {
      size_t s = size_t(num_shards) - 1;
      while (offsets[s] > id) --s;
      ++per_shard[s];
    }
    for (size_t s = 0; s < per_shard.size(); ++s) {
      touched_steps[s] += epochs * (per_shard[s] > 0);
      touched_rows[s] += epochs * per_shard[s];
    }
  }
  const int64_t steps = epochs * batches;
  const auto count = [](const std::map<std::string, int64_t>& m, const std::string& n) {
    return m.count(n) ? m.at(n) : int64_t(0);
  };
  for (size_t s = 0; s < table->shards().size(); ++s) {
    const std::string n = table->shards()[s]->name();
    SCOPED_TRACE(n);
    ASSERT_GT(touched_steps[s], 0);
    ASSERT_LT(touched_steps[s], steps);  // the data leaves every shard out of some step
    // Never read whole; asked only for its touched rows (the first call, building the
    // metrics, looks up one sample's 3 ids more).
    EXPECT_EQ(count(c.full_reads, n), 0);
    EXPECT_GE(count(c.rows_served, n), touched_rows[s]);
    EXPECT_LE(count(c.rows_served, n), touched_rows[s] + 3);
    // Updated with its touched rows only, always sparse, deduplicated; SGD skips the steps
    // that do not touch it, Adam updates it every step (empty rows: its moments decay).
    EXPECT_EQ(count(c.sparse_updates, n), count(c.updates, n));
    EXPECT_EQ(count(c.updates, n), optimizer == "adam" ? steps : touched_steps[s]);
    EXPECT_EQ(count(c.rows_updated, n), touched_rows[s]);
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, ShardedVariableFit,
                         ::testing::Combine(::testing::Values("sgd_momentum", "adam"),
                                            ::testing::Values(2, 3)));

TEST(ShardedVariableCheckpoints, WeightsSavedUnderThreeShardsLoadUnderTwoAndUnsharded) {
  TempDir dir;
  ShardingStrategy three(3), two(2);
  std::shared_ptr<Model> source = model_in(&three, "adam");
  source->fit(sharded_embedding_data(), FitOptions().epochs(1).verbose(0));
  const Tensor expected = source->predict(sharded_embedding_data(), PredictOptions().verbose(0));
  source->save_weights(dir.file("w.h5"));
  for (ShardingStrategy* strategy : {&two, static_cast<ShardingStrategy*>(nullptr)}) {
    SCOPED_TRACE(strategy ? "2 shards" : "unsharded");
    std::shared_ptr<Model> target = model_in(strategy, "adam");
    target->load_weights(dir.file("w.h5"));
    expect_weights_near(target->get_weights(), source->get_weights(), 0.0, 0.0);
    const Tensor got = target->predict(sharded_embedding_data(), PredictOptions().verbose(0));
    expect_weights_near({got}, {expected}, 0.0, 0.0);
  }
}

}  // namespace
}  // namespace strata::testing

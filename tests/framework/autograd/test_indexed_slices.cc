// Sparse gradients: a table read through Variable::gather gets IndexedSlices from
// GradientTape::gradient_with_slices, and the optimizer applies them to the touched rows (SGD,
// Adagrad) or as the dense gradient they stand for (Adam, RMSprop, weight decay).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include <strata/strata.h>

#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_all_close;
using testing::values;

VariablePtr table(int64_t rows = 6, int64_t dim = 3) {
  VariableSpec spec;
  spec.name = "table";
  spec.shape = Shape{rows, dim};
  spec.initial_value = random_uniform({rows, dim}, -1, 1, float32, 5);
  return create_variable(spec);
}

// sum((table[ids] * w)^2) for ids {4, 1, 4}: rows 1 and 4 touched, 4 twice.
Tensor lookup_loss(const VariablePtr& t, const Tensor& weights) {
  const Tensor rows = t->gather(Tensor::from_vector(std::vector<int64_t>{4, 1, 4}, Shape{3}));
  return reduce_sum(square(multiply(rows, weights)));
}

const Tensor& lookup_weights() {
  static const Tensor w = random_uniform({3, 3}, 0.5, 2, float32, 6);
  return w;
}

TEST(IndexedSlices, GatheredTableGetsItsRowsAndTheyEqualTheDenseGradient) {
  VariablePtr t = table();
  Tensor dense;
  {
    GradientTape tape;
    dense = tape.gradient(lookup_loss(t, lookup_weights()), {t})[0];
  }
  GradientTape tape;
  const std::vector<Gradient> g = tape.gradient_with_slices(lookup_loss(t, lookup_weights()), {t});
  ASSERT_TRUE(g[0].is_sparse());
  EXPECT_EQ(values(g[0].slices().indices), (std::vector<double>{4, 1, 4}));
  EXPECT_EQ(g[0].slices().values.shape(), Shape({3, 3}));
  EXPECT_EQ(g[0].shape(), t->shape());
  expect_all_close(g[0].to_dense(), dense, 1e-6, 1e-7);
  // Deduplicated: sorted unique rows, the repeated row's gradients summed.
  const IndexedSlices d = g[0].slices().deduplicated();
  EXPECT_EQ(values(d.indices), (std::vector<double>{1, 4}));
  expect_all_close(d.to_dense(), dense, 1e-6, 1e-7);
}

TEST(IndexedSlices, TableAlsoReadWholeGetsADenseGradient) {
  VariablePtr t = table();
  const auto loss_of = [&] { return lookup_loss(t, lookup_weights()) + reduce_sum(t->value()); };
  Tensor dense;
  {
    GradientTape tape;
    dense = tape.gradient(loss_of(), {t})[0];
  }
  GradientTape tape;
  const std::vector<Gradient> g = tape.gradient_with_slices(loss_of(), {t});
  ASSERT_FALSE(g[0].is_sparse());
  expect_all_close(g[0].dense(), dense, 1e-6, 1e-7);
}

TEST(IndexedSlices, HandMadeSlicesAreChecked) {
  IndexedSlices s{Tensor::from_vector(std::vector<int64_t>{0, 6}, Shape{2}), zeros({2, 3}),
                  Shape{6, 3}};
  testing::expect_error<IndexError>([&] { s.deduplicated(); }, {"index 6", "[0, 6)", "[6,3]"});
  s.indices = Tensor::from_vector(std::vector<int64_t>{0}, Shape{1});
  testing::expect_error<ShapeError>([&] { s.deduplicated(); }, {"IndexedSlices", "[2,3]", "[1]"});
  // Through the optimizer as well: nothing is written out of bounds.
  VariablePtr t = table();
  auto opt = std::make_shared<optimizers::SGD>(0.1);
  s.indices = Tensor::from_vector(std::vector<int64_t>{-1, 2}, Shape{2});
  EXPECT_THROW(opt->apply_gradients(std::vector<Gradient>{Gradient(s)}, {t}), IndexError);
}

TEST(IndexedSlices, RowsOfAScalarOrANegativeCountAreAShapeError) {
  EXPECT_EQ(IndexedSlices::rows_shape(Shape{6, 3}, 2), (Shape{2, 3}));
  EXPECT_EQ(IndexedSlices::rows_shape(Shape{6}, 0), (Shape{0}));
  // A scalar has no dim 0 to replace (this wrote past an empty vector).
  testing::expect_error<ShapeError>([] { IndexedSlices::rows_shape(Shape{}, 1); },
                                    {"rows_shape", "shape []", "no rows"});
  testing::expect_error<ShapeError>([] { IndexedSlices::rows_shape(Shape{6, 3}, -1); },
                                    {"-1 rows", "[6,3]"});
}

// One step of `opt` from the sparse gradient and one of `twin` from the dense gradient of the
// same loss, on two copies of the same table.
struct SparseVsDense {
  VariablePtr sparse = table(), dense = table();
};
SparseVsDense step_both(const std::shared_ptr<optimizers::Optimizer>& opt,
                        const std::shared_ptr<optimizers::Optimizer>& twin, int steps = 3) {
  SparseVsDense v;
  for (int s = 0; s < steps; ++s) {
    {
      GradientTape tape;
      opt->apply_gradients(tape.gradient_with_slices(lookup_loss(v.sparse, lookup_weights()),
                                                     {v.sparse}),
                           {v.sparse});
    }
    GradientTape tape;
    twin->apply_gradients(tape.gradient(lookup_loss(v.dense, lookup_weights()), {v.dense}),
                          {v.dense});
  }
  return v;
}

std::vector<float> row(const VariablePtr& v, int64_t r) {
  return v->read_value().slice(r, r + 1).to_vector<float>();
}

TEST(SparseUpdates, SgdMomentumUpdatesOnlyTheTouchedRowsAndTheirMomentum) {
  auto opt = std::make_shared<optimizers::SGD>(0.1, 0.9);
  auto twin = std::make_shared<optimizers::SGD>(0.1, 0.9);
  const VariablePtr before = table();
  SparseVsDense v = step_both(opt, twin);
  // Each step touches rows 1 and 4 only, so they follow the dense update exactly, and every
  // other row and its momentum are exactly where they started.
  for (int64_t r : {1, 4}) {
    expect_all_close(Tensor::from_vector(row(v.sparse, r)), Tensor::from_vector(row(v.dense, r)),
                     1e-6, 1e-7);
  }
  const VariablePtr m = opt->get_slot(v.sparse, "momentum");
  ASSERT_TRUE(m);
  for (int64_t r : {0, 2, 3, 5}) {
    EXPECT_EQ(row(v.sparse, r), row(before, r)) << "row " << r;
    EXPECT_EQ(row(m, r), std::vector<float>(3, 0.0f)) << "row " << r;
  }
}

TEST(SparseUpdates, SgdMomentumKeepsAnUntouchedRowsMomentumWhereDenseDecaysIt) {
  // Step 1 touches rows 1 and 4; step 2 touches row 2 only. Sparse (Keras 2): rows 1 and 4
  // keep their value and momentum in step 2. Dense: they move again by their momentum.
  auto run = [](bool sparse) {
    VariablePtr t = table();
    auto opt = std::make_shared<optimizers::SGD>(0.1, 0.9);
    for (const std::vector<int64_t>& ids : {std::vector<int64_t>{4, 1}, std::vector<int64_t>{2}}) {
      GradientTape tape;
      const Tensor loss = reduce_sum(square(t->gather(Tensor::from_vector(ids))));
      if (sparse) {
        opt->apply_gradients(tape.gradient_with_slices(loss, {t}), {t});
      } else {
        opt->apply_gradients(tape.gradient(loss, {t}), {t});
      }
    }
    return t;
  };
  const VariablePtr sparse = run(true), dense = run(false), start = table();
  // Row 1 after step 1: x - 0.1 * 2x = 0.8x, in both. Step 2: sparse leaves it; dense moves
  // it by momentum 0.9 * (-0.2x).
  const std::vector<float> x = row(start, 1), s = row(sparse, 1), d = row(dense, 1);
  for (size_t k = 0; k < x.size(); ++k) {
    EXPECT_NEAR(s[k], 0.8f * x[k], 1e-6);
    EXPECT_NEAR(d[k], 0.8f * x[k] - 0.18f * x[k], 1e-6);
  }
}

TEST(SparseUpdates, AdagradTouchedRowsOnlyEqualsDense) {
  SparseVsDense v = step_both(std::make_shared<optimizers::Adagrad>(0.1),
                              std::make_shared<optimizers::Adagrad>(0.1));
  expect_all_close(v.sparse->read_value(), v.dense->read_value(), 1e-6, 1e-7);
}

TEST(SparseUpdates, AdamAndRmspropUpdateEveryRowAsTheDenseGradient) {
  // Keras 2's sparse Adam decays every row's moments each step: the dense update of a gradient
  // that is zero off the touched rows.
  SparseVsDense adam = step_both(std::make_shared<optimizers::Adam>(0.1),
                                 std::make_shared<optimizers::Adam>(0.1));
  expect_all_close(adam.sparse->read_value(), adam.dense->read_value(), 1e-6, 1e-7);
  SparseVsDense rms = step_both(std::make_shared<optimizers::RMSprop>(0.1, 0.9, 0.5),
                                std::make_shared<optimizers::RMSprop>(0.1, 0.9, 0.5));
  expect_all_close(rms.sparse->read_value(), rms.dense->read_value(), 1e-6, 1e-7);
}

TEST(SparseUpdates, ClipnormSeesTheDenseGradientsNorm) {
  const auto options = optimizers::SGDOptions().clipnorm(0.5);
  auto opt = std::make_shared<optimizers::SGD>(0.1, options);
  auto twin = std::make_shared<optimizers::SGD>(0.1, options);
  SparseVsDense v = step_both(opt, twin, 1);
  expect_all_close(v.sparse->read_value(), v.dense->read_value(), 1e-6, 1e-7);
}

TEST(SparseUpdates, LossScaleOptimizerUnscalesRowsAndSkipsNonFiniteOnes) {
  auto inner = std::make_shared<optimizers::SGD>(0.1);
  optimizers::LossScaleOptimizer opt(inner);
  VariablePtr t = table();
  const Tensor start = t->read_value();
  IndexedSlices rows{Tensor::from_vector(std::vector<int64_t>{2}, Shape{1}),
                     full({1, 3}, opt.loss_scale()), Shape{6, 3}};
  opt.apply_gradients(std::vector<Gradient>{Gradient(rows)}, {t});
  const std::vector<float> want = row(t, 2);
  const std::vector<float> was = start.slice(2, 3).to_vector<float>();
  for (size_t k = 0; k < 3; ++k) EXPECT_NEAR(want[k], was[k] - 0.1f, 1e-6);  // unscaled to 1
  const double scale = opt.loss_scale();
  rows.values = full({1, 3}, std::numeric_limits<double>::infinity());
  opt.apply_gradients(std::vector<Gradient>{Gradient(rows)}, {t});
  EXPECT_EQ(opt.loss_scale(), scale / 2);
  EXPECT_EQ(row(t, 2), want);
}

}  // namespace
}  // namespace strata

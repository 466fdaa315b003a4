#include <gtest/gtest.h>

#include <set>

#include <strata/strata.h>

namespace strata {
namespace {

TEST(Variable, AssignUpdatesInPlace) {
  auto v = create_variable({.name = "v", .shape = {3}, .initial_value = tensor({1.f, 2.f, 3.f})});
  EXPECT_EQ(v->name(), "v");
  EXPECT_EQ(v->shape(), Shape({3}));
  EXPECT_TRUE(v->trainable());
  EXPECT_EQ(v->aggregation(), VariableAggregation::kNone);
  Tensor before = v->value();
  Tensor snapshot = v->read_value();
  v->assign(tensor({4.f, 5.f, 6.f}));
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{4, 5, 6}));  // same memory
  EXPECT_EQ(snapshot.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  v->assign_add(tensor({1.f, 1.f, 1.f}));
  v->assign_sub(tensor({0.5f, 0.5f, 0.5f}));
  EXPECT_EQ(v->value().to_vector<float>(), (std::vector<float>{4.5f, 5.5f, 6.5f}));
}

TEST(Variable, AssignValidates) {
  auto v = create_variable({.name = "dense/kernel", .shape = {2, 2}});
  try {
    v->assign(zeros({3}));
    FAIL();
  } catch (const ShapeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("dense/kernel"), std::string::npos);
    EXPECT_NE(m.find("[3]"), std::string::npos);
    EXPECT_NE(m.find("[2,2]"), std::string::npos);
  }
  EXPECT_THROW(v->assign(zeros({2, 2}, int32)), DTypeError);
  EXPECT_THROW(create_variable({.name = "x", .shape = {2}, .initial_value = zeros({3})}), ShapeError);
}

TEST(Variable, InitializerAndDefaults) {
  auto v = create_variable({.name = "k", .shape = {4, 5}, .initializer = initializers::ones()});
  EXPECT_EQ(v->value().to_vector<float>(), std::vector<float>(20, 1.0f));
  auto z = create_variable({.name = "z", .shape = {2}});
  EXPECT_EQ(z->value().to_vector<float>(), std::vector<float>(2, 0.0f));
}

TEST(CreatorStack, ScopesNestAndUnwind) {
  std::vector<std::string> seen;
  {
    VariableCreatorScope outer([&](const VariableSpec& s, const NextCreator& next) {
      seen.push_back("outer:" + s.name);
      return next(s);
    });
    {
      VariableCreatorScope inner([&](const VariableSpec& s, const NextCreator& next) {
        seen.push_back("inner:" + s.name);
        VariableSpec renamed = s;
        renamed.name = "renamed/" + s.name;
        return next(renamed);
      });
      auto v = create_variable({.name = "a", .shape = {1}});
      EXPECT_EQ(v->name(), "renamed/a");
    }
    create_variable({.name = "b", .shape = {1}});
  }
  create_variable({.name = "c", .shape = {1}});
  EXPECT_EQ(seen, (std::vector<std::string>{"inner:a", "outer:renamed/a", "outer:b"}));
}

// A creator that returns its own Variable subclass, as a distribution strategy does.
class TaggedVariable : public Variable {
 public:
  using Variable::Variable;
};

TEST(CreatorStack, SeesEveryVariableOfAModelAndItsOptimizer) {
  std::vector<std::string> names;
  std::vector<VariablePtr> created;
  VariableCreatorScope scope([&](const VariableSpec& s, const NextCreator&) -> VariablePtr {
    names.push_back(s.name);
    auto v = std::make_shared<TaggedVariable>(s);
    created.push_back(v);
    return v;
  });
  set_random_seed(1);
  Sequential model({std::make_shared<Dense>(4, DenseOptions().activation("relu").name("hidden")),
                    std::make_shared<Dense>(1, DenseOptions().name("out"))});
  Tensor x = random_normal({8, 3});
  optimizers::Adam opt(0.01);
  GradientTape tape;
  Tensor loss = reduce_mean(square(model(x)));
  auto vars = model.trainable_variables();
  opt.apply_gradients(tape.gradient(loss, vars), vars);

  std::set<std::string> got(names.begin(), names.end());
  for (const char* expected : {"hidden/kernel", "hidden/bias", "out/kernel", "out/bias"}) {
    EXPECT_TRUE(got.count(expected)) << expected;
  }
  // Adam's iteration count and two slots per weight also came through the creator.
  EXPECT_EQ(names.size(), 4u + 1u + 8u);
  for (const VariablePtr& v : model.weights()) {
    EXPECT_NE(dynamic_cast<TaggedVariable*>(v.get()), nullptr) << v->name();
  }
  for (const VariablePtr& v : opt.variables()) {
    EXPECT_NE(dynamic_cast<TaggedVariable*>(v.get()), nullptr) << v->name();
  }
}

}  // namespace
}  // namespace strata

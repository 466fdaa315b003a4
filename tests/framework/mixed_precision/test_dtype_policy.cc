// DTypePolicy names and errors, the global policy and its scope, and how layers take, report,
// serialise and reload their policy (Keras 3's layout of a mixed layer's config).
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "layers/layer_registry.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using mixed_precision::DTypePolicy;
using testing::expect_error;

TEST(DTypePolicy, NamesGiveComputeAndVariableDtypes) {
  struct Case {
    const char* name;
    DType compute, variable;
  };
  for (const Case& c : {Case{"float32", float32, float32}, Case{"float16", float16, float16},
                        Case{"bfloat16", bfloat16, bfloat16}, Case{"float64", float64, float64},
                        Case{"mixed_float16", float16, float32},
                        Case{"mixed_bfloat16", bfloat16, float32}, Case{"int64", int64, int64}}) {
    const DTypePolicy p(c.name);
    EXPECT_EQ(p.name(), c.name);
    EXPECT_EQ(p.compute_dtype(), c.compute) << c.name;
    EXPECT_EQ(p.variable_dtype(), c.variable) << c.name;
    EXPECT_EQ(p.is_mixed(), c.compute != c.variable) << c.name;
  }
  EXPECT_EQ(DTypePolicy().name(), "float32");
  EXPECT_EQ(DTypePolicy("mixed_float16"), DTypePolicy(std::string("mixed_float16")));
  EXPECT_NE(DTypePolicy("mixed_float16"), DTypePolicy("float16"));
}

TEST(DTypePolicy, UnknownNameListsTheValidOnes) {
  expect_error<ValueError>([] { DTypePolicy("mixed_float8"); },
                           {"mixed_float8", "float32", "float16", "bfloat16", "float64",
                            "mixed_float16", "mixed_bfloat16"});
  expect_error<ValueError>([] { DTypePolicy(""); }, {"DTypePolicy", "mixed_bfloat16"});
}

TEST(DTypePolicy, ConfigIsKeras3sSerialisation) {
  // What Keras 3 writes for a mixed layer: dtype_policies.serialize(DTypePolicy("mixed_float16")).
  const Json mixed = DTypePolicy("mixed_float16").to_config();
  EXPECT_EQ(mixed, Json::parse(R"({"module": "keras", "class_name": "DTypePolicy",
                                   "config": {"name": "mixed_float16"}, "registered_name": null})"));
  EXPECT_EQ(DTypePolicy::from_config(mixed), DTypePolicy("mixed_float16"));
  // The default stays the plain name every Keras reads.
  EXPECT_EQ(DTypePolicy("float32").to_config(), Json("float32"));
  EXPECT_EQ(DTypePolicy::from_config(Json("mixed_bfloat16")).name(), "mixed_bfloat16");
  // Keras 2's Policy and Keras 3.0's FloatDTypePolicy read too.
  EXPECT_EQ(DTypePolicy::from_config(Json::parse(
                R"({"class_name": "Policy", "config": {"name": "mixed_bfloat16"}})")).name(),
            "mixed_bfloat16");
  EXPECT_EQ(DTypePolicy::from_config(Json::parse(
                R"({"class_name": "FloatDTypePolicy", "config": {"name": "float16"}})")).name(),
            "float16");
  expect_error<ValueError>(
      [] { DTypePolicy::from_config(Json::parse(R"({"class_name": "Other", "config": {}})")); },
      {"DTypePolicy", "Other"});
  expect_error<ValueError>([] { DTypePolicy::from_config(Json(3)); }, {"DTypePolicy", "3"});
}

TEST(GlobalPolicy, SetGetAndScopeRestores) {
  EXPECT_EQ(mixed_precision::global_policy().name(), "float32");
  {
    mixed_precision::PolicyScope scope("mixed_bfloat16");
    EXPECT_EQ(mixed_precision::global_policy().name(), "mixed_bfloat16");
    {
      mixed_precision::PolicyScope inner("mixed_float16");
      EXPECT_EQ(mixed_precision::global_policy().name(), "mixed_float16");
    }
    EXPECT_EQ(mixed_precision::global_policy().name(), "mixed_bfloat16");
  }
  EXPECT_EQ(mixed_precision::global_policy().name(), "float32");
  mixed_precision::set_global_policy("mixed_float16");
  EXPECT_EQ(mixed_precision::global_policy().compute_dtype(), float16);
  mixed_precision::set_global_policy("float32");
  EXPECT_EQ(mixed_precision::global_policy().name(), "float32");
  // A whole model cannot compute in integers; the bad name is named.
  expect_error<ValueError>([] { mixed_precision::set_global_policy("int64"); },
                           {"set_global_policy", "int64"});
  expect_error<ValueError>([] { mixed_precision::set_global_policy("half_precision"); },
                           {"half_precision", "mixed_float16"});
  EXPECT_EQ(mixed_precision::global_policy().name(), "float32");
}

TEST(LayerPolicy, TakenFromTheGlobalPolicyAtConstruction) {
  auto before = std::make_shared<Dense>(2);
  std::shared_ptr<Dense> mixed;
  {
    mixed_precision::PolicyScope scope("mixed_float16");
    mixed = std::make_shared<Dense>(2);
  }
  auto after = std::make_shared<Dense>(2);
  EXPECT_EQ(before->dtype_policy().name(), "float32");
  EXPECT_EQ(mixed->dtype_policy().name(), "mixed_float16");
  EXPECT_EQ(mixed->compute_dtype(), float16);
  EXPECT_EQ(mixed->variable_dtype(), float32);
  EXPECT_EQ(after->dtype_policy().name(), "float32");
  // Hashing outputs int64 bins whatever the global policy (Keras gives it an int64 policy).
  mixed_precision::PolicyScope scope("mixed_float16");
  EXPECT_EQ(Hashing(4).dtype_policy().name(), "int64");
}

TEST(LayerPolicy, SetBeforeBuildOnlyKeepsTheVariableDtypeAfter) {
  auto d = std::make_shared<Dense>(2);
  d->set_dtype_policy("mixed_bfloat16");
  (*d)(zeros({1, 3}));
  EXPECT_EQ(d->kernel()->dtype(), float32);
  // Same variable dtype: allowed on a built layer (float32 <-> mixed).
  d->set_dtype_policy("float32");
  d->set_dtype_policy("mixed_float16");
  EXPECT_EQ(d->compute_dtype(), float16);
  expect_error<StateError>([&] { d->set_dtype_policy("float64"); },
                           {d->name(), "mixed_float16", "float64", "before"});
  EXPECT_EQ(d->dtype_policy().name(), "mixed_float16");
}

TEST(LayerPolicy, ConfigCarriesThePolicyAndReloads) {
  std::shared_ptr<Layer> bn;
  {
    mixed_precision::PolicyScope scope("mixed_float16");
    bn = std::make_shared<BatchNormalization>();
  }
  const Json saved = layer_to_json(*bn);
  EXPECT_EQ(saved.at("config").at("dtype"),
            Json::parse(R"({"module": "keras", "class_name": "DTypePolicy",
                            "config": {"name": "mixed_float16"}, "registered_name": null})"));
  // Reloaded under the default global policy, the layer keeps the one it was saved with.
  const std::shared_ptr<Layer> copy = layer_from_config(Json::parse(saved.dump()));
  EXPECT_EQ(copy->dtype_policy().name(), "mixed_float16");
  EXPECT_EQ(copy->get_config(), bn->get_config());
  // A float32 layer still says "float32", and reloads as float32 under a mixed global policy.
  const Json plain = layer_to_json(Dense(3));
  EXPECT_EQ(plain.at("config").at("dtype"), Json("float32"));
  mixed_precision::PolicyScope scope("mixed_bfloat16");
  EXPECT_EQ(layer_from_config(plain)->dtype_policy().name(), "float32");
  // An older config without "dtype" takes the global policy, as Keras' dtype=None.
  Json old = plain.at("config");
  Json stripped = Json::object();
  for (const std::string& key : old.keys()) {
    if (key != "dtype") stripped.set(key, old.at(key));
  }
  const auto from_old =
      layer_from_config(Json::object({{"class_name", "Dense"}, {"config", stripped}}));
  EXPECT_EQ(from_old->dtype_policy().name(), "mixed_bfloat16");
  // Keras 2's mixed layer config.
  stripped.set("dtype",
               Json::parse(R"({"class_name": "Policy", "config": {"name": "mixed_float16"}})"));
  EXPECT_EQ(layer_from_config(Json::object({{"class_name", "Dense"}, {"config", stripped}}))
                ->dtype_policy()
                .name(),
            "mixed_float16");
  // A bad policy in a config is an error naming it.
  stripped.set("dtype", "float8");
  expect_error<ValueError>(
      [&] { layer_from_config(Json::object({{"class_name", "Dense"}, {"config", stripped}})); },
      {"float8"});
}

}  // namespace
}  // namespace strata

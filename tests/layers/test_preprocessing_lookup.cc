// StringLookup, IntegerLookup and Hashing: index layouts, adapt ordering, invert, Keras' hash
// values, configs and bad inputs.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "layers/preprocessing/preprocessing_layers.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;
using Strings = std::vector<std::string>;
using Ints = std::vector<int64_t>;

TEST(PreprocessingStringLookup, KerasIndexLayout) {
  // Keras' docstring: vocab [a, b, c, d], [[a, c, d], [d, z, b]] -> [[1, 3, 4], [4, 0, 2]].
  StringLookup lookup(StringLookupOptions().vocabulary({"a", "b", "c", "d"}));
  EXPECT_EQ(lookup.name().rfind("string_lookup", 0), 0u);
  Tensor ids = lookup.lookup({"a", "c", "d", "d", "z", "b"}, {2, 3});
  EXPECT_EQ(ids.dtype(), int64);
  EXPECT_EQ(ids.shape(), Shape({2, 3}));
  EXPECT_EQ(ids.to_vector<int64_t>(), (Ints{1, 3, 4, 4, 0, 2}));
  EXPECT_EQ(lookup(Strings{"b"}).to_vector<int64_t>(), (Ints{2}));
  EXPECT_EQ(lookup({"b", "a"}).to_vector<int64_t>(), (Ints{2, 1}));
  EXPECT_EQ(lookup.vocabulary_size(), 5);
  EXPECT_EQ(lookup.get_vocabulary(), (Strings{"[UNK]", "a", "b", "c", "d"}));
  EXPECT_EQ(lookup.get_vocabulary(false), (Strings{"a", "b", "c", "d"}));

  // Mask at 0, then two OOV indices; OOV tokens hash (FarmHash) into {1, 2}.
  StringLookup masked(StringLookupOptions().vocabulary({"a", "b"}).mask_token("").num_oov_indices(2));
  EXPECT_EQ(masked.get_vocabulary(), (Strings{"", "[UNK]", "[UNK]", "a", "b"}));
  auto m = masked.lookup({"", "a", "b", "zz", "q"}).to_vector<int64_t>();
  EXPECT_EQ(m[0], 0);
  EXPECT_EQ(m[1], 3);
  EXPECT_EQ(m[2], 4);
  for (int i : {3, 4}) EXPECT_TRUE(m[size_t(i)] == 1 || m[size_t(i)] == 2);
  // Special tokens leading the vocabulary in Keras' layout are accepted and stripped.
  StringLookup lead(StringLookupOptions().vocabulary({"[UNK]", "x", "y"}));
  EXPECT_EQ(lead.get_vocabulary(false), (Strings{"x", "y"}));
}

TEST(PreprocessingStringLookup, AdaptOrdersByCountThenTokenDescending) {
  StringLookup lookup(StringLookupOptions().max_tokens(4).mask_token("[MASK]"));
  lookup.adapt({"b", "a", "c", "a", "d", "c", "a", "[MASK]", "[UNK]", "e", "[MASK]"});
  // counts: a 3, c 2, b/d/e 1 (ties: e, d, b); max_tokens 4 = mask + oov + 2 tokens.
  EXPECT_EQ(lookup.get_vocabulary(), (Strings{"[MASK]", "[UNK]", "a", "c"}));
  StringLookup all;
  all.adapt({"b", "a", "c", "a", "d"});
  EXPECT_EQ(all.get_vocabulary(false), (Strings{"a", "d", "c", "b"}));
  EXPECT_EQ(all.lookup({"d", "nope"}).to_vector<int64_t>(), (Ints{2, 0}));
  all.adapt({"x"});  // adapt starts over
  EXPECT_EQ(all.get_vocabulary(false), (Strings{"x"}));
}

TEST(PreprocessingStringLookup, InvertAndErrors) {
  // Keras' docstring: invert, [[1, 3, 4], [4, 0, 2]] -> [[a, c, d], [d, [UNK], b]].
  StringLookup inv(StringLookupOptions().vocabulary({"a", "b", "c", "d"}).invert(true));
  EXPECT_EQ(inv.invert_lookup(tensor<int64_t>({1, 3, 4, 4, 0, 2}, {2, 3})),
            (Strings{"a", "c", "d", "d", "[UNK]", "b"}));
  StringLookup inv_mask(StringLookupOptions().vocabulary({"a"}).mask_token("<m>").invert(true));
  EXPECT_EQ(inv_mask.invert_lookup(tensor<int32_t>({0, 1, 2, 9})), (Strings{"<m>", "[UNK]", "a", "[UNK]"}));

  expect_error<ValueError>([&] { inv.lookup({"a"}); }, {"invert=true", "invert_lookup"});
  StringLookup fwd(StringLookupOptions().vocabulary({"a"}));
  expect_error<ValueError>([&] { fwd.invert_lookup(tensor<int64_t>({1})); }, {"invert=true"});
  Layer& as_layer = fwd;  // how a model would call it
  expect_error<ValueError>([&] { as_layer(tensor<int64_t>({1})); }, {"std::vector<std::string>", "Dataset"});
  expect_error<ShapeError>([&] { fwd.lookup({"a", "b", "c"}, {2, 2}); }, {"[2,2]"});
  expect_error<ValueError>([&] { fwd.adapt({"a"}); }, {"static vocabulary"});
  expect_error<ValueError>([] { StringLookup(StringLookupOptions().vocabulary({"a", "b", "a"})); },
                           {"repeated", "\"a\""});
  expect_error<ValueError>([] { StringLookup(StringLookupOptions().vocabulary({"a", ""}).mask_token("")); },
                           {"mask token"});
  expect_error<ValueError>([] { StringLookup(StringLookupOptions().vocabulary({"a", "b", "c"}).max_tokens(3)); },
                           {"maximum vocab size", "4"});
  expect_error<ValueError>([] { StringLookup(StringLookupOptions().max_tokens(1)); }, {"max_tokens"});
  expect_error<ValueError>([] { StringLookup(StringLookupOptions().output_mode("one_hot")); }, {"one_hot"});
  StringLookup strict(StringLookupOptions().vocabulary({"a"}).num_oov_indices(0));
  EXPECT_EQ(strict.lookup({"a"}).to_vector<int64_t>(), (Ints{0}));
  expect_error<ValueError>([&] { strict.lookup({"b"}); }, {"num_oov_indices=0", "\"b\""});
}

TEST(PreprocessingStringLookup, ConfigRoundTrip) {
  StringLookup lookup(StringLookupOptions().mask_token("").num_oov_indices(2).name("sl"));
  Json empty = lookup.get_config();
  EXPECT_TRUE(empty.at("vocabulary").is_null());
  EXPECT_TRUE(empty.at("max_tokens").is_null());
  EXPECT_EQ(empty.at("oov_token").as_string(), "[UNK]");
  EXPECT_EQ(empty.at("output_mode").as_string(), "int");
  lookup.adapt({"x", "y", "y"});
  Json c = lookup.get_config();
  EXPECT_EQ(c.at("vocabulary").as_string_vector(), (Strings{"y", "x"}));
  EXPECT_EQ(c.at("vocabulary_size").as_int(), 5);
  auto restored = std::static_pointer_cast<StringLookup>(StringLookup::from_config(c));
  EXPECT_EQ(restored->get_config(), c);
  EXPECT_EQ(restored->lookup({"x", "y", ""}).to_vector<int64_t>(), (Ints{4, 3, 0}));
}

TEST(PreprocessingIntegerLookup, ForwardInvertAndMultipleOov) {
  // Keras' docstring: vocab [12, 36, 1138, 42], [[12, 1138, 42], [42, 1000, 36]] -> [[1, 3, 4], [4, 0, 2]].
  IntegerLookup lookup(IntegerLookupOptions().vocabulary({12, 36, 1138, 42}));
  EXPECT_EQ(lookup.name().rfind("integer_lookup", 0), 0u);
  Tensor ids = lookup(tensor<int64_t>({12, 1138, 42, 42, 1000, 36}, {2, 3}));
  EXPECT_EQ(ids.shape(), Shape({2, 3}));
  EXPECT_EQ(ids.to_vector<int64_t>(), (Ints{1, 3, 4, 4, 0, 2}));
  EXPECT_EQ(lookup(tensor<int32_t>({36})).dtype(), int64);
  // Keras' docstring: two OOV indices (floormod), [[12, 1138, 42], [37, 1000, 36]] -> [[2, 4, 5], [1, 0, 3]].
  IntegerLookup two(IntegerLookupOptions().vocabulary({12, 36, 1138, 42}).num_oov_indices(2));
  EXPECT_EQ(two(tensor<int64_t>({12, 1138, 42, 37, 1000, 36})).to_vector<int64_t>(), (Ints{2, 4, 5, 1, 0, 3}));
  EXPECT_EQ(two(tensor<int64_t>({-3})).to_vector<int64_t>(), (Ints{1}));  // floormod(-3, 2) = 1
  // Mask 0 at index 0.
  IntegerLookup masked(IntegerLookupOptions().vocabulary({12, 36}).mask_token(0));
  EXPECT_EQ(masked.get_vocabulary(), (Ints{0, -1, 12, 36}));
  EXPECT_EQ(masked(tensor<int64_t>({0, 36, 5})).to_vector<int64_t>(), (Ints{0, 3, 1}));
  // Invert: ids -> tokens, OOV ids -> -1.
  IntegerLookup inv(IntegerLookupOptions().vocabulary({12, 36, 1138, 42}).invert(true));
  EXPECT_EQ(inv(tensor<int64_t>({1, 3, 4, 4, 0, 2})).to_vector<int64_t>(), (Ints{12, 1138, 42, 42, -1, 36}));
}

TEST(PreprocessingIntegerLookup, AdaptConfigAndErrors) {
  IntegerLookup lookup(IntegerLookupOptions().name("il"));
  lookup.adapt(tensor<int64_t>({12, 1138, 42, 42, 1000, 36, 36, -1}, {2, 4}));
  // counts: 42 2, 36 2, then 1138, 1000, 12 (ties descending); the OOV token -1 is dropped.
  EXPECT_EQ(lookup.get_vocabulary(), (Ints{-1, 42, 36, 1138, 1000, 12}));
  Json c = lookup.get_config();
  EXPECT_EQ(c.at("oov_token").as_int(), -1);
  EXPECT_EQ(c.at("vocabulary_dtype").as_string(), "int64");
  EXPECT_EQ(c.at("vocabulary").as_int_vector(), (Ints{42, 36, 1138, 1000, 12}));
  EXPECT_EQ(IntegerLookup::from_config(c)->get_config(), c);
  expect_error<DTypeError>([&] { lookup(tensor({1.f})); }, {"int32 or int64", "float32"});
  expect_error<ValueError>([] { IntegerLookup(IntegerLookupOptions().num_oov_indices(-1)); },
                           {"num_oov_indices"});
}

TEST(PreprocessingHashing, MatchesKerasFarmHashAndSipHash) {
  const Strings abcde{"A", "B", "C", "D", "E"};
  // The values of Keras' Hashing docstring (FarmHash64 / SipHash64 as in TensorFlow).
  Hashing h(3);
  EXPECT_EQ(h.name().rfind("hashing", 0), 0u);
  EXPECT_EQ(h(abcde).to_vector<int64_t>(), (Ints{1, 0, 1, 1, 2}));
  Hashing masked(3, HashingOptions().mask_value(""));
  EXPECT_EQ(masked.hash({"A", "B", "", "C", "D"}, {5, 1}).to_vector<int64_t>(), (Ints{1, 1, 0, 2, 2}));
  EXPECT_EQ(Hashing(3, HashingOptions().salt(133, 137))(abcde).to_vector<int64_t>(), (Ints{1, 2, 1, 0, 2}));
  EXPECT_EQ(Hashing(3, HashingOptions().salt(133))(abcde).to_vector<int64_t>(), (Ints{0, 0, 2, 1, 0}));
}

TEST(PreprocessingHashing, IntegersRangeStabilityAndConfig) {
  Hashing h(1000);
  Tensor values = arange(0, 500, 1, int64);
  auto bins = h(values).to_vector<int64_t>();
  for (int64_t b : bins) EXPECT_TRUE(b >= 0 && b < 1000);
  // Integers hash as their decimal string, so int32, int64 and "7" agree.
  EXPECT_EQ(h(tensor<int32_t>({7})).to_vector<int64_t>(), h(Strings{"7"}).to_vector<int64_t>());
  // Fixed values (FarmHash Fingerprint64 of the decimal strings), stable across runs/platforms.
  EXPECT_EQ(h(tensor<int64_t>({0, 1, 42, -5, 123456789})).to_vector<int64_t>(),
            (Ints{735, 849, 736, 816, 306}));
  Hashing hm(10, HashingOptions().mask_value(int64_t(0)));
  auto mb = hm(tensor<int64_t>({0, 1, 2, 0}, {2, 2})).to_vector<int64_t>();
  EXPECT_EQ(mb[0], 0);
  EXPECT_EQ(mb[3], 0);
  EXPECT_TRUE(mb[1] >= 1 && mb[2] >= 1);

  Json c = Hashing(8, HashingOptions().salt(1, 2).mask_value("pad").name("hh")).get_config();
  EXPECT_EQ(c.at("salt").as_int_vector(), (Ints{1, 2}));
  EXPECT_EQ(c.at("mask_value").as_string(), "pad");
  EXPECT_EQ(c.at("dtype").as_string(), "int64");
  EXPECT_EQ(Hashing::from_config(c)->get_config(), c);
  expect_error<ValueError>([] { Hashing(0); }, {"num_bins", "0"});
  expect_error<ValueError>([&] { hm(Strings{"a"}); }, {"mask_value"});
}

TEST(PreprocessingLayers, FactoriesListEveryClass) {
  auto f = preprocessing_layer_factories();
  for (const char* name : {"Rescaling", "Normalization", "RandomFlip", "RandomCrop",
                           "RandomTranslation", "StringLookup", "IntegerLookup", "Hashing"}) {
    ASSERT_TRUE(f.count(name)) << name;
  }
  auto layer = f.at("RandomFlip")(RandomFlip("horizontal", 3).get_config());
  EXPECT_EQ(layer->class_name(), "RandomFlip");
}

}  // namespace
}  // namespace strata

// tf.train.Example: ExampleBuilder's bytes, parse_single_example / parse_example with every
// feature kind, defaults, VarLen, and the errors naming the feature and the record.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "datasets/temp_dir.h"
#include "datasets/tfrecord/example_builder.h"
#include "datasets/tfrecord/example_parsing.h"
#include "datasets/tfrecord/tfrecord_dataset.h"
#include "framework/core/error.h"
#include "framework/summary/record_writer.h"
#include "support/test_helpers.h"

namespace strata::data {
namespace {

using strata::testing::expect_error;

std::string example(int64_t label, std::vector<float> bbox, std::string image) {
  return ExampleBuilder()
      .add_int64("label", {label})
      .add_float("bbox", std::move(bbox))
      .add_bytes("image", image)
      .add_int64("pair", {label, label * 10})
      .serialize();
}

TEST(ExampleBuilder, WireBytesMatchTensorFlowsEncoding) {
  // Example{features{feature{"a": int64_list{1}}}}, encoded by hand from the protobuf rules:
  // Example.features (1, LEN) > Features.feature map entry (1, LEN) > key (1) "a",
  // value (2) Feature > int64_list (3, LEN) > Int64List.value (1, packed) [1].
  const std::string want = std::string("\x0a\x0c\x0a\x0a\x0a\x01", 6) + "a" +
                           std::string("\x12\x05\x1a\x03\x0a\x01\x01", 7);
  EXPECT_EQ(ExampleBuilder().add_int64("a", {1}).serialize(), want);
  expect_error<ValueError>([] { ExampleBuilder().add_int64("a", {1}).add_float("a", {1.f}); },
                           {"'a'", "twice"});
}

TEST(ExampleParsing, SingleExampleEveryKind) {
  const std::string image("\x89PNG\0\x01", 6);
  FeatureSpecs spec = {
      {"label", FixedLenFeature({}, int64)},
      {"pair", FixedLenFeature({2}, int64)},
      {"bbox", VarLenFeature(float32)},
      {"image", FixedLenFeature({}, uint8)},
      {"missing_fixed", FixedLenFeature({2}, float32, Tensor::scalar<float>(0.5f))},
      {"missing_bytes", FixedLenFeature({1}, uint8, bytes_tensor("dflt"))},
      {"missing_var", VarLenFeature(int64)},
  };
  ParsedFeatures f = parse_single_example(example(7, {0.1f, 0.2f, 0.3f}, image), spec);
  EXPECT_EQ(f["label"].values.shape(), Shape{});
  EXPECT_EQ(f["label"].values.item<int64_t>(), 7);
  EXPECT_EQ(f["pair"].values.to_vector<int64_t>(), (std::vector<int64_t>{7, 70}));
  EXPECT_EQ(f["bbox"].values.to_vector<float>(), (std::vector<float>{0.1f, 0.2f, 0.3f}));
  EXPECT_EQ(f["bbox"].row_lengths.to_vector<int64_t>(), std::vector<int64_t>{3});
  EXPECT_EQ(f["image"].values.dtype(), uint8);
  EXPECT_EQ(f["image"].string(0), image);
  EXPECT_EQ(record_bytes(f["image"].values), image);
  EXPECT_EQ(f["missing_fixed"].values.shape(), Shape{2});
  EXPECT_EQ(f["missing_fixed"].values.to_vector<float>(), (std::vector<float>{0.5f, 0.5f}));
  EXPECT_EQ(f["missing_bytes"].strings(), std::vector<std::string>{"dflt"});
  EXPECT_EQ(f["missing_var"].values.numel(), 0);
  EXPECT_EQ(f["missing_var"].row_lengths.to_vector<int64_t>(), std::vector<int64_t>{0});
}

TEST(ExampleParsing, BatchStacksFixedAndRaggedVarLen) {
  const std::vector<std::string> batch = {example(1, {1.f}, "ab"), example(2, {}, ""),
                                          example(3, {2.f, 3.f}, "xyz")};
  FeatureSpecs spec = {{"label", FixedLenFeature({}, int64)},
                       {"pair", FixedLenFeature({2}, float32)},
                       {"bbox", VarLenFeature(float32)},
                       {"image", FixedLenFeature({}, uint8)},
                       {"tags", VarLenFeature(uint8)}};
  // "pair" holds int64 values: float32 is the wrong kind.
  expect_error<ValueError>([&] { parse_example(batch, spec); },
                           {"'pair'", "record 0", "int64_list", "float32"});
  spec.at("pair") = FixedLenFeature({2}, int64);
  ParsedFeatures f = parse_example(batch, spec);
  EXPECT_EQ(f["label"].values.shape(), Shape{3});
  EXPECT_EQ(f["label"].values.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(f["pair"].values.shape(), (Shape{3, 2}));
  EXPECT_EQ(f["bbox"].values.to_vector<float>(), (std::vector<float>{1.f, 2.f, 3.f}));
  EXPECT_EQ(f["bbox"].row_lengths.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(f["image"].strings(), (std::vector<std::string>{"ab", "", "xyz"}));
  EXPECT_EQ(f["image"].value_lengths.to_vector<int64_t>(), (std::vector<int64_t>{2, 0, 3}));
  EXPECT_EQ(f["image"].row_lengths.to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(f["tags"].row_lengths.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0}));
}

TEST(ExampleParsing, ErrorsNameTheFeatureAndRecord) {
  const std::vector<std::string> batch = {example(1, {1.f}, "a"),
                                          ExampleBuilder().add_int64("other", {1}).serialize()};
  expect_error<ValueError>(
      [&] { parse_example(batch, {{"label", FixedLenFeature({}, int64)}}); },
      {"'label'", "record 1", "missing", "default_value"});
  expect_error<ValueError>(
      [&] { parse_example(batch, {{"pair", FixedLenFeature({3}, int64, Tensor::scalar<int64_t>(0))}}); },
      {"'pair'", "record 0", "expected 3 values", "found 2"});
  expect_error<ValueError>(
      [&] { parse_single_example(batch[0], {{"image", VarLenFeature(int64)}}); },
      {"'image'", "record 0", "bytes_list", "int64"});
  expect_error<ValueError>([&] { parse_example({"\xff\xff garbage"}, {}); },
                           {"record 0", "not a serialized tf.train.Example"});
  expect_error<ValueError>(
      [&] { parse_single_example(batch[0], {{"label", FixedLenFeature({}, int32)}}); },
      {"'label'", "int32"});
  expect_error<ValueError>(
      [&] {
        parse_single_example(batch[0],
                             {{"x", FixedLenFeature({2}, float32, Tensor::from_vector<float>({1, 2, 3}))}});
      },
      {"'x'", "default_value", "3 elements"});
}

TEST(ExampleParsing, ThroughTFRecordDataset) {
  strata::testing::TempDir dir;
  const std::string path = dir.file("ex.tfrecord.gz");
  {
    TFRecordWriter w(path, "GZIP");
    for (int64_t i = 0; i < 4; ++i) w.write(example(i, {float(i)}, std::string(size_t(i), 'p')));
  }
  FeatureSpecs spec = {{"label", FixedLenFeature({}, int64)}, {"bbox", VarLenFeature(float32)}};
  auto ds = TFRecordDataset({path}, "GZIP").map([spec](const Element& e) {
    ParsedFeatures f = parse_single_example(e[0], spec);
    return Element{f.at("bbox").values, f.at("label").values};
  });
  auto it = ds.batch(4).make_iterator();
  auto batch = it->next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ((*batch)[1].to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ((*batch)[0].to_vector<float>(), (std::vector<float>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace strata::data

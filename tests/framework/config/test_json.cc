// Json::parse on hostile text: nesting is bounded, so nothing downstream recurses off the stack.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <strata/strata.h>

#include "framework/config/json.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

std::string nested_arrays(int depth) {
  return std::string(size_t(depth), '[') + std::string(size_t(depth), ']');
}

TEST(Json, NestingUpToTheLimitParses) {
  const Json j = Json::parse(nested_arrays(Json::kMaxDepth));
  EXPECT_TRUE(j.is_array());
  EXPECT_EQ(j.dump(), nested_arrays(Json::kMaxDepth));
}

TEST(Json, NestingBeyondTheLimitIsAValueErrorNamingIt) {
  testing::expect_error<ValueError>([] { Json::parse(nested_arrays(Json::kMaxDepth + 1)); },
                                    {"deeper than 512 levels", "at byte 512"});
  // Objects count as well as arrays.
  std::string objects;
  for (int i = 0; i < 600; ++i) objects += "{\"a\":";
  objects += "1" + std::string(600, '}');
  testing::expect_error<ValueError>([&] { Json::parse(objects); }, {"deeper than 512 levels"});
}

TEST(Json, BracketsInsideStringsDoNotCount) {
  const std::string brackets(2000, '[');
  // An escaped quote does not end the string: the brackets after it are still inside it.
  const std::string text = "{\"name\": \"\\\"" + brackets + "\", \"x\": [1]}";
  const Json j = Json::parse(text);
  EXPECT_EQ(j.at("name").as_string(), "\"" + brackets);
  EXPECT_EQ(j.at("x").size(), 1u);
}

// Before the bound, ~70,000 levels parsed (nlohmann's parser is iterative) and then overflowed
// the stack in the recursive dump() that builds model_from_json's error message.
TEST(Json, DeeplyNestedModelJsonIsAValueErrorNotACrash) {
  testing::expect_error<ValueError>([] { model_from_json(nested_arrays(100000)); },
                                    {"deeper than 512 levels"});
  std::string config = "{\"class_name\": \"Sequential\", \"config\": {\"layers\": ";
  config += nested_arrays(100000) + "}}";
  testing::expect_error<ValueError>([&] { model_from_json(config); }, {"deeper than 512 levels"});
}

TEST(Json, LayersThatAreNotAListAreAValueErrorNamingThem) {
  for (const char* cls : {"Sequential", "Functional"}) {
    const std::string config =
        std::string("{\"class_name\": \"") + cls + "\", \"config\": {\"layers\": \"abc\"}}";
    testing::expect_error<ValueError>([&] { model_from_json(config); },
                                      {"\"layers\" must be a list of", "got \"abc\""});
  }
}

// The fuzzer found "units": 1e300 converted to int64_t: undefined behaviour. Integers spelled as
// whole doubles (4.0, as Python writes them) still read; anything out of range is a ValueError.
TEST(Json, IntegersOutOfTheSignedRangeAreAValueError) {
  EXPECT_EQ(Json::parse("4.0").as_int(), 4);
  EXPECT_EQ(Json::parse("-9223372036854775808").as_int(), INT64_MIN);
  EXPECT_EQ(Json::parse("9223372036854775807").as_int(), INT64_MAX);
  for (const char* text : {"1e300", "-1e300", "9223372036854775808.0", "9223372036854775808",
                           "18446744073709551615", "4.5"}) {
    testing::expect_error<ValueError>([&] { Json::parse(text).as_int(); }, {"integer"});
  }
  const std::string config =
      "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [{\"class_name\": "
      "\"Dense\", \"config\": {\"units\": 1e300}}]}}";
  EXPECT_THROW(model_from_json(config), ValueError);
}

}  // namespace
}  // namespace strata

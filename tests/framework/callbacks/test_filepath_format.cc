// Python's str.format as ModelCheckpoint's file names use it; expected strings are what CPython 3
// prints for the same format() call.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "framework/callbacks/filepath_format.h"
#include "framework/core/error.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

std::string fmt(FormatValue v, const std::string& spec) { return format_value(v, spec); }

TEST(FilepathFormat, PythonFloatRepr) {
  EXPECT_EQ(python_float_repr(0.1), "0.1");
  EXPECT_EQ(python_float_repr(1.0), "1.0");
  EXPECT_EQ(python_float_repr(-2.5), "-2.5");
  EXPECT_EQ(python_float_repr(0.0), "0.0");
  EXPECT_EQ(python_float_repr(-0.0), "-0.0");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(0.00001), "1e-05");
  EXPECT_EQ(python_float_repr(1.5e-7), "1.5e-07");
  EXPECT_EQ(python_float_repr(123456789.0), "123456789.0");
  EXPECT_EQ(python_float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(2.5e300), "2.5e+300");
  // A float32 loss widened to double, as Keras logs hold it.
  EXPECT_EQ(python_float_repr(double(0.6931472f)), "0.6931471824645996");
  EXPECT_EQ(python_float_repr(std::nan("")), "nan");
  EXPECT_EQ(python_float_repr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(python_float_repr(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(FilepathFormat, IntegerSpecs) {
  EXPECT_EQ(fmt(int64_t{3}, "02d"), "03");
  EXPECT_EQ(fmt(int64_t{12}, "02d"), "12");
  EXPECT_EQ(fmt(int64_t{123}, "02d"), "123");
  EXPECT_EQ(fmt(int64_t{7}, "03d"), "007");
  EXPECT_EQ(fmt(int64_t{-5}, "03d"), "-05");
  EXPECT_EQ(fmt(int64_t{5}, ""), "5");
  EXPECT_EQ(fmt(int64_t{5}, "d"), "5");
  EXPECT_EQ(fmt(int64_t{5}, "+d"), "+5");
  EXPECT_EQ(fmt(int64_t{3}, ">4d"), "   3");
  EXPECT_EQ(fmt(int64_t{3}, "<4d"), "3   ");
  EXPECT_EQ(fmt(int64_t{3}, "^5d"), "  3  ");
  EXPECT_EQ(fmt(int64_t{3}, "*^5d"), "**3**");
  EXPECT_EQ(fmt(int64_t{5}, "<05d"), "50000");
  EXPECT_EQ(fmt(int64_t{1234567}, ",d"), "1,234,567");
  EXPECT_EQ(fmt(int64_t{1234567}, "_"), "1_234_567");
  EXPECT_EQ(fmt(std::numeric_limits<int64_t>::min(), "d"), "-9223372036854775808");
  // An int takes the float types, as in Python.
  EXPECT_EQ(fmt(int64_t{2}, ".1f"), "2.0");
  EXPECT_EQ(fmt(int64_t{5}, "%"), "500.000000%");
}

TEST(FilepathFormat, FloatSpecs) {
  EXPECT_EQ(fmt(0.41234, ".2f"), "0.41");
  EXPECT_EQ(fmt(0.5, "f"), "0.500000");
  EXPECT_EQ(fmt(2.675, ".2f"), "2.67");  // the binary value is below 2.675, as Python rounds it
  EXPECT_EQ(fmt(0.41234, ".3e"), "4.123e-01");
  EXPECT_EQ(fmt(1e-5, ".2E"), "1.00E-05");
  EXPECT_EQ(fmt(0.000123456, ".3g"), "0.000123");
  EXPECT_EQ(fmt(1234567.0, ".3g"), "1.23e+06");
  EXPECT_EQ(fmt(123.456, "g"), "123.456");
  EXPECT_EQ(fmt(0.0001, "g"), "0.0001");
  EXPECT_EQ(fmt(0.00001, "g"), "1e-05");
  EXPECT_EQ(fmt(100.0, "g"), "100");
  EXPECT_EQ(fmt(0.5, ""), "0.5");
  EXPECT_EQ(fmt(0.5, ".3"), "0.5");
  EXPECT_EQ(fmt(1.0, ".3"), "1.0");
  EXPECT_EQ(fmt(100.0, ".3"), "1e+02");
  EXPECT_EQ(fmt(0.25, ".1%"), "25.0%");
  EXPECT_EQ(fmt(3.14159, "+.2f"), "+3.14");
  EXPECT_EQ(fmt(3.14159, " .2f"), " 3.14");
  EXPECT_EQ(fmt(-3.5, "08.2f"), "-0003.50");
  EXPECT_EQ(fmt(-0.001, ".2f"), "-0.00");
  EXPECT_EQ(fmt(1234.5, ",.1f"), "1,234.5");
  EXPECT_EQ(fmt(std::nan(""), ".2f"), "nan");
  EXPECT_EQ(fmt(std::numeric_limits<double>::infinity(), "F"), "INF");
  EXPECT_EQ(fmt(-std::numeric_limits<double>::infinity(), ".1f"), "-inf");
}

TEST(FilepathFormat, SpecErrors) {
  testing::expect_error<ValueError>([] { fmt(0.5, "02d"); }, {"'d'", "integers", "float"});
  testing::expect_error<ValueError>([] { fmt(int64_t{3}, ".2d"); }, {"precision", "integer"});
  testing::expect_error<ValueError>([] { fmt(int64_t{3}, "x"); }, {"\"x\"", "d e E f F g G %"});
  testing::expect_error<ValueError>([] { fmt(int64_t{3}, "#d"); }, {"'#'", "not supported"});
  testing::expect_error<ValueError>([] { fmt(0.5, ".f"); }, {"precision"});
  testing::expect_error<ValueError>([] { fmt(0.5, ".2fx"); }, {".2fx"});
}

TEST(FilepathFormat, TemplateFillsNamedFields) {
  FilepathTemplate t("ckpt-{epoch:02d}-{val_loss:.2f}.h5");
  EXPECT_EQ(t.format({{"epoch", int64_t{3}}, {"val_loss", 0.41234}}), "ckpt-03-0.41.h5");
  EXPECT_EQ(t.field_names(), (std::vector<std::string>{"epoch", "val_loss"}));
  EXPECT_EQ(FilepathTemplate("w.{epoch}.{loss}.h5").format({{"epoch", int64_t{1}}, {"loss", 0.5}}),
            "w.1.0.5.h5");
  EXPECT_EQ(FilepathTemplate("{{literal}}-{epoch}}}").format({{"epoch", int64_t{3}}}),
            "{literal}-3}");
  EXPECT_EQ(FilepathTemplate("plain.h5").format({}), "plain.h5");
  EXPECT_EQ(FilepathTemplate("{x:!<4}|").format({{"x", int64_t{7}}}), "7!!!|");
}

TEST(FilepathFormat, TemplateSyntaxErrors) {
  auto bad = [](const char* pattern, std::initializer_list<std::string_view> parts) {
    testing::expect_error<ValueError>([&] { FilepathTemplate t(pattern); }, parts);
  };
  bad("ckpt-{}.h5", {"ckpt-{}.h5", "positional"});
  bad("ckpt-{0}.h5", {"positional"});
  bad("ckpt-{epoch.h5", {"no matching '}'"});
  bad("ckpt-epoch}.h5", {"single '}'"});
  bad("ckpt-{a.b}.h5", {"attribute"});
  bad("ckpt-{a[0]}.h5", {"index"});
  bad("ckpt-{epoch!r}.h5", {"conversions"});
  bad("ckpt-{epoch:{w}}.h5", {"nested"});
  bad("ckpt-{epoch:q}.h5", {"{epoch:q}", "invalid format spec"});
}

TEST(FilepathFormat, UnknownFieldNamesTheKeysAvailable) {
  FilepathTemplate t("ckpt-{val_acc:.2f}.h5");
  testing::expect_error<ValueError>(
      [&] {
        t.format({{"epoch", int64_t{1}}, {"loss", 0.5}, {"val_loss", 0.6}});
      },
      {"{val_acc}", "available: epoch, loss, val_loss"});
  testing::expect_error<ValueError>(
      [] {
        FilepathTemplate("{loss:03d}").format({{"loss", 0.5}});
      },
      {"{loss:03d}", "'d'"});
}

}  // namespace
}  // namespace strata

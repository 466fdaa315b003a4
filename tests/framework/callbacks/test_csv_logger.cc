#include <gtest/gtest.h>
#include <strata/strata.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "framework/callbacks/csv_logger.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class CSVLoggerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("strata_csv_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static std::string read(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // One fit's worth of hook calls with scripted logs.
  static void run(CSVLogger& csv, const std::vector<Logs>& epochs) {
    csv.on_train_begin(Logs());
    for (size_t e = 0; e < epochs.size(); ++e) csv.on_epoch_end(int(e), epochs[e]);
    csv.on_train_end(Logs());
  }

  static Logs logs(std::vector<std::pair<std::string, double>> items) {
    Logs l;
    for (const auto& [k, v] : items) l.set(k, v);
    return l;
  }

  fs::path dir_;
};

TEST_F(CSVLoggerTest, HeaderSortedKeysAndPythonFloats) {
  CSVLogger csv(path("log.csv"));
  run(csv, {logs({{"loss", 0.5}, {"accuracy", 0.25}, {"val_loss", 0.75}, {"val_accuracy", 0.125}}),
            logs({{"loss", double(0.6931472f)},
                  {"accuracy", 1.0},
                  {"val_loss", 1e-5},
                  {"val_accuracy", 0.1}})});
  EXPECT_EQ(read(path("log.csv")),
            "epoch,accuracy,loss,val_accuracy,val_loss\r\n"
            "0,0.25,0.5,0.125,0.75\r\n"
            "1,1.0,0.6931471824645996,0.1,1e-05\r\n");
}

TEST_F(CSVLoggerTest, NoValidationAddsValColumnsFilledWithNA) {
  // Keras 2.15: without val_* keys in the first epoch, val_<key> columns are added (validation
  // may start later with validation_freq > 1); missing values are written NA.
  CSVLogger csv(path("log.csv"));
  run(csv, {logs({{"loss", 0.5}}), logs({{"loss", 0.25}, {"val_loss", 0.3}})});
  EXPECT_EQ(read(path("log.csv")),
            "epoch,loss,val_loss\r\n"
            "0,0.5,NA\r\n"
            "1,0.25,0.3\r\n");
}

TEST_F(CSVLoggerTest, AppendContinuesWithoutASecondHeader) {
  const std::string file = path("log.csv");
  CSVLogger first(file);
  run(first, {logs({{"loss", 0.5}, {"val_loss", 0.6}})});
  CSVLogger second(file, ",", /*append=*/true);
  run(second,
      {logs({{"loss", 0.25}, {"val_loss", 0.3}}), logs({{"loss", 0.125}, {"val_loss", 0.2}})});
  EXPECT_EQ(read(file),
            "epoch,loss,val_loss\r\n"
            "0,0.5,0.6\r\n"
            "0,0.25,0.3\r\n"
            "1,0.125,0.2\r\n");
  // Without append the file starts over.
  CSVLogger again(file);
  run(again, {logs({{"loss", 1.0}, {"val_loss", 2.0}})});
  EXPECT_EQ(read(file), "epoch,loss,val_loss\r\n0,1.0,2.0\r\n");
}

TEST_F(CSVLoggerTest, AppendToAMissingOrEmptyFileWritesTheHeader) {
  CSVLogger missing(path("new.csv"), ",", true);
  run(missing, {logs({{"loss", 0.5}, {"val_loss", 0.5}})});
  EXPECT_EQ(read(path("new.csv")), "epoch,loss,val_loss\r\n0,0.5,0.5\r\n");
  std::ofstream(path("empty.csv")).close();
  CSVLogger empty(path("empty.csv"), ",", true);
  run(empty, {logs({{"loss", 0.5}, {"val_loss", 0.5}})});
  EXPECT_EQ(read(path("empty.csv")), "epoch,loss,val_loss\r\n0,0.5,0.5\r\n");
}

TEST_F(CSVLoggerTest, SeparatorAndQuoting) {
  CSVLogger csv(path("log.tsv"), ";");
  run(csv, {logs({{"loss", 0.5}, {"a;b", 2.0}, {"val_loss", 0.5}})});
  EXPECT_EQ(read(path("log.tsv")), "epoch;\"a;b\";loss;val_loss\r\n0;2.0;0.5;0.5\r\n");
}

TEST_F(CSVLoggerTest, FlushedAfterEveryEpoch) {
  CSVLogger csv(path("log.csv"));
  csv.on_train_begin(Logs());
  csv.on_epoch_end(0, logs({{"loss", 0.5}, {"val_loss", 0.5}}));
  EXPECT_EQ(read(path("log.csv")), "epoch,loss,val_loss\r\n0,0.5,0.5\r\n");
  csv.on_train_end(Logs());
}

TEST_F(CSVLoggerTest, Errors) {
  testing::expect_error<ValueError>([&] { CSVLogger csv(path("x.csv"), ";;"); },
                                    {"CSVLogger", "1-character", "\";;\""});
  CSVLogger bad(path("no/such/dir/log.csv"));
  testing::expect_error<IOError>([&] { bad.on_train_begin(Logs()); },
                                 {"CSVLogger", "no/such/dir/log.csv"});
}

TEST_F(CSVLoggerTest, FitWritesOneRowPerEpochMatchingHistory) {
  set_random_seed(8);
  auto model =
      std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(1)});
  model->compile(std::make_shared<optimizers::SGD>(0.05), "mse", {"mae"});
  Tensor x = random_normal({40, 3}), y = random_normal({40, 1});
  History h =
      model->fit(x, y,
                 FitOptions().epochs(3).batch_size(8).validation_split(0.25).verbose(0).callbacks(
                     {std::make_shared<CSVLogger>(path("fit.csv"))}));
  std::istringstream in(read(path("fit.csv")));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "epoch,loss,mae,val_loss,val_mae\r");
  for (int e = 0; e < 3; ++e) {
    ASSERT_TRUE(std::getline(in, line));
    std::istringstream row(line);
    std::string cell;
    std::getline(row, cell, ',');
    EXPECT_EQ(cell, std::to_string(e));
    for (const char* key : {"loss", "mae", "val_loss", "val_mae"}) {
      std::getline(row, cell, ',');
      // repr(float) round-trips: the text parses back to exactly the logged value.
      EXPECT_EQ(std::stod(cell), h.history[key][size_t(e)]) << key << " epoch " << e;
    }
  }
  EXPECT_FALSE(std::getline(in, line));
}

}  // namespace
}  // namespace strata

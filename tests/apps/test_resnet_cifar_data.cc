// resnet_cifar sizes its epochs from the data it loaded (it used the 50,000-image constant), and
// an empty test set is a clear error (it aborted on std::map::at in --eval_only).
#include <gtest/gtest.h>

#include <string>

#include "tests/apps/app_runner.h"
#include "tests/apps/cifar_files.h"
#include "tests/datasets/temp_dir.h"

namespace strata::apps_testing {
namespace {
using strata::testing::TempDir;

TEST(AppResnetCifarData, EpochsFollowTheLoadedTrainingSet) {
  TempDir tmp;
  const std::string data = write_cifar_dir(tmp.path(), 4, 4);  // 20 training images
  const AppResult r = run_app({STRATA_RESNET_CIFAR_BIN, "--data_dir=" + data, "--batch_size=4",
                               "--train_epochs=1", "--skip_eval", "--distribution_strategy=off"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // 20 / 4 = 5 steps an epoch; the learning rate drops at epochs 91, 136, 182 of them.
  EXPECT_NE(r.output.find("Training 1 epoch(s) of 5 steps, batch size 4, learning rate 0.003125 "
                          "(/10 at steps 455, 680, 910)"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Trained 5 steps (20 examples)"), std::string::npos) << r.output;
}

TEST(AppResnetCifarData, BatchLargerThanTheTrainingSetIsAFlagError) {
  TempDir tmp;
  const std::string data = write_cifar_dir(tmp.path(), 4, 4);
  const AppResult r = run_app({STRATA_RESNET_CIFAR_BIN, "--data_dir=" + data, "--batch_size=32"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("error: --batch_size 32 exceeds the 20 training images of --data_dir " +
                          data + "; use at most 20"),
            std::string::npos) << r.output;
}

TEST(AppResnetCifarData, EmptyTestSetIsAClearError) {
  TempDir tmp;
  const std::string data = write_cifar_dir(tmp.path(), 4, 0);
  const std::string model_dir = (tmp.path() / "run").string();
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--eval_only", "--model_dir=" + model_dir},
        std::vector<std::string>{"--train_epochs=1"}}) {
    std::vector<std::string> args{STRATA_RESNET_CIFAR_BIN, "--data_dir=" + data, "--batch_size=4"};
    args.insert(args.end(), extra.begin(), extra.end());
    SCOPED_TRACE(extra[0]);
    const AppResult r = run_app(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("error: the CIFAR-10 test set (test_batch.bin) of --data_dir " + data +
                            " has no images, so there is nothing to evaluate"),
              std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("map::at"), std::string::npos) << r.output;
  }
}

// --data_format tfrecord: the same training from TFRecord files of Examples, read through the
// pipeline (parse, decode_png, augment); epochs sized from the records counted.
TEST(AppResnetCifarData, TFRecordFilesTrainAndEvaluate) {
  TempDir tmp;
  const std::string data = write_cifar_records(tmp.path() / "records", 4, 5, 6);
  const AppResult r = run_app({STRATA_RESNET_CIFAR_BIN, "--data_format=tfrecord",
                               "--data_dir=" + data, "--batch_size=4", "--train_epochs=1",
                               "--distribution_strategy=off"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("CIFAR-10 TFRecords in " + data + ": 20 training and 6 validation records"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Training 1 epoch(s) of 5 steps"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Trained 5 steps (20 examples)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Evaluation ("), std::string::npos) << r.output;
}

TEST(AppResnetCifarData, TFRecordFormatWithoutFilesNamesTheConverter) {
  TempDir tmp;
  const AppResult r = run_app({STRATA_RESNET_CIFAR_BIN, "--data_format=tfrecord",
                               "--data_dir=" + tmp.path().string(), "--batch_size=4"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no train files (" + tmp.path().string() + "/train-*)"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("strata_cifar10_to_tfrecord"), std::string::npos) << r.output;
  const AppResult no_dir = run_app({STRATA_RESNET_CIFAR_BIN, "--data_format=tfrecord"});
  EXPECT_EQ(no_dir.exit_code, 2) << no_dir.output;
  EXPECT_NE(no_dir.output.find("--data_format tfrecord needs --data_dir"), std::string::npos)
      << no_dir.output;
}

}  // namespace
}  // namespace strata::apps_testing

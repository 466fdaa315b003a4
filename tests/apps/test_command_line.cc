// The apps' binaries on bad command lines: the exit status (2 for a bad flag, main_guard.h) and
// a message naming the flag, its range and the value, for both apps; absl's own paths (--help,
// --flagfile) as documented in README.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/apps/app_runner.h"

namespace strata::apps_testing {
namespace {

struct BadFlagCase {
  std::vector<std::string> args;  // args[0]: the binary
  std::string message;
};

TEST(AppCommandLine, BadNumbersExitWithStatus2AndTheRange) {
  const std::string mnist = STRATA_MNIST_BIN, resnet = STRATA_RESNET_CIFAR_BIN;
  const std::vector<BadFlagCase> cases = {
      // issue 13: each of these used to be truncated, clamped or half-parsed
      {{mnist, "--epochs", "4294967296"},
       "error: --epochs: got '4294967296', expected a whole number from 1 to 1000000"},
      {{mnist, "--backup_freq", "1e2", "--model_dir", "/tmp/x"},
       "error: --backup_freq: got '1e2', expected 'epoch' or a whole number from 1 to 1000000000"},
      {{mnist, "--backup_freq=50abc"}, "error: --backup_freq: got '50abc', expected 'epoch' or"},
      {{mnist, "--batch_size", "99999999999999999999"},
       "error: --batch_size: got '99999999999999999999', expected a whole number from 1 to 1000000"},
      {{mnist, "--num_cpu_replicas", "4294967298", "--distribution_strategy", "mirrored"},
       "error: --num_cpu_replicas: got '4294967298', expected a whole number from 1 to 256"},
      {{mnist, "--verbose=3"}, "error: --verbose: got '3', expected a whole number from 0 to 2"},
      {{mnist, "--model", "resnet"}, "error: --model: 'resnet' is not one of: seed_cnn convnet conv_pool"},
      {{mnist, "--backup_freq=5"}, "error: --backup_freq=5 needs --model_dir"},
      {{resnet, "--num_packs", "4294967296"},
       "error: --num_packs: got '4294967296', expected a whole number from 1 to 1024"},
      {{resnet, "--train_epochs", "4294967296"},
       "error: --train_epochs: got '4294967296', expected a whole number from 1 to 1000000"},
      {{resnet, "--num_cpu_replicas", "4294967298"},
       "error: --num_cpu_replicas: got '4294967298', expected a whole number from 1 to 256"},
      {{resnet, "--batch_size", "99999999999999999999"},
       "error: --batch_size: got '99999999999999999999', expected a whole number from 1 to 1000000"},
      {{resnet, "--bogus"}, "error: unknown flag --bogus; run with --help for the list"},
      {{resnet, "--eval_only", "false"}, "--eval_only=false"},
  };
  for (const BadFlagCase& c : cases) {
    std::string line;
    for (const std::string& a : c.args) line += " " + a;
    SCOPED_TRACE(line);
    const AppResult r = run_app(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
    // Nothing ran: the error comes before any work.
    EXPECT_EQ(r.output.find("Strategy:"), std::string::npos) << r.output;
  }
}

TEST(AppCommandLine, HelpAndVersionAreAbsls) {
  // absl prints the usage and exits with status 1 after --help (its convention, as gflags');
  // --version exits 0.
  const AppResult help = run_app({STRATA_MNIST_BIN, "--help"});
  EXPECT_EQ(help.exit_code, 1);
  EXPECT_NE(help.output.find("Flags from apps/mnist/mnist_flags.cc:"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("--epochs (Training epochs (1 to 1000000).); default: 15;"),
            std::string::npos) << help.output;
  EXPECT_EQ(help.output.find("--flagfile"), std::string::npos) << help.output;
  const AppResult full = run_app({STRATA_RESNET_CIFAR_BIN, "--helpfull"});
  EXPECT_EQ(full.exit_code, 1);
  EXPECT_NE(full.output.find("--flagfile"), std::string::npos) << full.output;
  EXPECT_NE(full.output.find("--train_epochs"), std::string::npos) << full.output;
  const AppResult version = run_app({STRATA_RESNET_CIFAR_BIN, "--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.output.find("Strata "), std::string::npos) << version.output;
}

TEST(AppCommandLine, FlagfileValuesAreRangeCheckedToo) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("strata_flagfile_" + std::to_string(::getpid()))).string();
  std::ofstream(path) << "--train_epochs=0\n";
  // absl reads the file and reports its errors itself: "ERROR: ...", status 1.
  const AppResult r = run_app({STRATA_RESNET_CIFAR_BIN, "--flagfile=" + path});
  std::filesystem::remove(path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("ERROR: Illegal value '0' specified for flag 'train_epochs'; expected a "
                          "whole number from 1 to 1000000"),
            std::string::npos) << r.output;
}

}  // namespace
}  // namespace strata::apps_testing

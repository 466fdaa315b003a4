// The apps' command line in-process: apps/common/flags.h on resnet_cifar's flag definitions (the
// ones tests/fuzz/fuzz_flags.cc parses), through ParseMode::kNoExit, which the fuzzer uses.
// Each value is parsed strictly in its real type, with the range in the error; nothing is
// truncated or clamped (issue 13: --epochs 4294967296 trained 0 epochs, --num_cpu_replicas
// 4294967298 ran 2 replicas, --backup_freq 1e2 became 1).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "apps/common/flags.h"
#include "apps/resnet_cifar/resnet_cifar_flags.h"

namespace {

using apps::FlagError;

// resnet_cifar's parse_flags on `words`, from every flag's default.
resnet_cifar::Options parse(std::vector<std::string> words) {
  apps::reset_flags_to_defaults();
  words.insert(words.begin(), "resnet_cifar");
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  return resnet_cifar::parse_flags(int(argv.size()), argv.data(), apps::ParseMode::kNoExit);
}

std::string error_of(const std::vector<std::string>& words) {
  try {
    parse(words);
  } catch (const FlagError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(AppFlags, ParseIntegerIsStrict) {
  int64_t v = 0;
  std::string error;
  EXPECT_TRUE(apps::parse_integer("42", 0, 100, &v, &error));
  EXPECT_EQ(v, 42);
  EXPECT_TRUE(apps::parse_integer("-3", -5, 5, &v, &error));
  EXPECT_EQ(v, -3);
  for (const char* bad : {"", " 5", "5 ", "+5", "0x10", "1e2", "50abc", "5.0", "1_000", "--5",
                          "99999999999999999999", "-99999999999999999999", "101", "-1"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(apps::parse_integer(bad, 0, 100, &v, &error));
    EXPECT_EQ(error, "expected a whole number from 0 to 100");
  }
  EXPECT_TRUE(apps::parse_integer("9223372036854775807", 0, std::numeric_limits<int64_t>::max(),
                                  &v, &error));
  EXPECT_EQ(apps::range_text(0, std::numeric_limits<int64_t>::max()), "a whole number >= 0");
}

TEST(AppFlags, DefaultsAndBothValueSyntaxes) {
  const resnet_cifar::Options d = parse({});
  EXPECT_EQ(d.batch_size, 128);
  EXPECT_EQ(d.train_epochs, 182);
  EXPECT_EQ(d.distribution_strategy, "one_device");
  EXPECT_EQ(d.resnet_size, 20);
  EXPECT_FALSE(d.use_synthetic_data);
  const resnet_cifar::Options o =
      parse({"--batch_size=64", "--train_epochs", "3", "-train_steps=7", "--use_synthetic_data",
             "--noskip_eval", "--resnet_size=56", "--seed", "9223372036854775807", "--"});
  EXPECT_EQ(o.batch_size, 64);
  EXPECT_EQ(o.train_epochs, 3);
  EXPECT_EQ(o.train_steps, 7);
  EXPECT_TRUE(o.use_synthetic_data);
  EXPECT_FALSE(o.skip_eval);
  EXPECT_EQ(o.resnet_size, 56);
  EXPECT_EQ(o.seed, uint64_t(std::numeric_limits<int64_t>::max()));
  // Each parse starts from the defaults.
  EXPECT_EQ(parse({}).batch_size, 128);
}

TEST(AppFlags, OutOfRangeValuesNameTheFlagTheRangeAndTheValue) {
  EXPECT_EQ(error_of({"--train_epochs", "4294967296"}),
            "--train_epochs: got '4294967296', expected a whole number from 1 to 1000000 (see --help)");
  EXPECT_EQ(error_of({"--num_cpu_replicas=4294967298"}),
            "--num_cpu_replicas: got '4294967298', expected a whole number from 1 to 256 (see --help)");
  EXPECT_EQ(error_of({"--num_packs", "4294967296"}),
            "--num_packs: got '4294967296', expected a whole number from 1 to 1024 (see --help)");
  EXPECT_EQ(error_of({"--batch_size", "99999999999999999999"}),
            "--batch_size: got '99999999999999999999', expected a whole number from 1 to 1000000 (see --help)");
  EXPECT_EQ(error_of({"--train_epochs=0"}),
            "--train_epochs: got '0', expected a whole number from 1 to 1000000 (see --help)");
  EXPECT_EQ(error_of({"--log_steps=1e2"}),
            "--log_steps: got '1e2', expected a whole number from 1 to 1000000000 (see --help)");
  EXPECT_EQ(error_of({"--train_steps=50abc"}),
            "--train_steps: got '50abc', expected a whole number from 0 to 1000000000 (see --help)");
  EXPECT_EQ(error_of({"--seed=-1"}), "--seed: got '-1', expected a whole number >= 0 (see --help)");
  EXPECT_EQ(error_of({"--resnet_size=21"}),
            "--resnet_size: got '21', expected one of 20, 32, 44, 56, 110 (see --help)");
  EXPECT_EQ(error_of({"--use_synthetic_data=maybe"}),
            "--use_synthetic_data: got 'maybe', expected true or false (or --use_synthetic_data "
            "/ --nouse_synthetic_data) (see --help)");
}

TEST(AppFlags, SyntaxMistakesSayWhatToWrite) {
  EXPECT_EQ(error_of({"--bogus"}), "unknown flag --bogus; run with --help for the list");
  EXPECT_EQ(error_of({"--train_epoch=3"}),
            "unknown flag --train_epoch (did you mean --train_epochs?); run with --help for the list");
  // The unknown flag, not the value it left over, is the mistake.
  EXPECT_EQ(error_of({"--epochs", "3"}), "unknown flag --epochs; run with --help for the list");
  EXPECT_EQ(error_of({"--eval_only", "false"}),
            "unexpected argument 'false': a true/false flag takes its value after '=': "
            "--eval_only=false (see --help)");
  EXPECT_EQ(error_of({"extra"}),
            "unexpected argument 'extra': the apps take only flags (--name=value) (see --help)");
  EXPECT_EQ(error_of({"--", "extra"}),
            "unexpected argument 'extra' after '--': the apps take only flags (see --help)");
  EXPECT_EQ(error_of({"--batch_size"}), "--batch_size needs a value: --batch_size=VALUE (see --help)");
  EXPECT_EQ(error_of({"--model_dir", "--eval_only"}),
            "--model_dir needs a value, but the next argument is the flag '--eval_only'; write "
            "--model_dir=VALUE");
  EXPECT_EQ(error_of({"--nobatch_size"}),
            "--nobatch_size: only true/false flags have a --no form, and --batch_size is not one "
            "(see --help)");
  EXPECT_EQ(error_of({"--noskip_eval=true"}),
            "--noskip_eval takes no value: write --skip_eval=true or --noskip_eval");
  EXPECT_EQ(error_of({"--=3"}), "malformed argument '--=3': flags look like --name=value (see --help)");
  EXPECT_EQ(error_of({"--dtype=fp64"}), "--dtype: 'fp64' is not one of: fp32 fp16 bf16 (see --help)");
  // Bytes that would garble a terminal are escaped.
  EXPECT_EQ(error_of({"--batch_size=\x1b[2J"}),
            "--batch_size: got '\\x1b[2J', expected a whole number from 1 to 1000000 (see --help)");
}

TEST(AppFlags, AbslExtrasAreAccepted) {
  // --undefok names flags that may be unknown; usage flags are left to absl::ParseCommandLine.
  EXPECT_EQ(parse({"--undefok=old_flag,other", "--old_flag=3", "--noother"}).batch_size, 128);
  EXPECT_EQ(error_of({"--undefok=old_flag", "--other"}),
            "unknown flag --other; run with --help for the list");
  EXPECT_EQ(parse({"--helpfull"}).batch_size, 128);
  EXPECT_TRUE(apps::set_flags_from_argv(2, std::vector<char*>{const_cast<char*>("p"),
                                                              const_cast<char*>("--help")}.data()));
}

TEST(AppFlags, CombinationsAreChecked) {
  EXPECT_EQ(error_of({"--eval_only"}), "--eval_only needs --model_dir (where model.h5 is)");
  EXPECT_EQ(error_of({"--eval_only", "--model_dir=/tmp/m", "--skip_eval"}),
            "--eval_only and --skip_eval contradict each other");
  EXPECT_EQ(error_of({"--all_reduce_alg=hierarchical_copy"}),
            "--all_reduce_alg applies to --distribution_strategy=mirrored only");
  EXPECT_EQ(error_of({"--distribution_strategy=one_device", "--num_cpu_replicas=2"}).substr(0, 57),
            "--num_cpu_replicas=2 needs --distribution_strategy=mirror");
}

}  // namespace

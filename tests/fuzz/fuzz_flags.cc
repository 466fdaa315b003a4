// libFuzzer target for the apps' command line: the input is split into argv words and parsed
// with resnet_cifar's flag definitions (the app with the most flags and kinds of value) through
// the same code the app runs (resnet_cifar::parse_flags; apps/common/flags.h), in the mode that
// never exits (ParseMode::kNoExit: --help is accepted and nothing is printed, --flagfile and
// --fromenv are left unread).
//
// Every input must end in an Options or an apps::FlagError; anything else escaping (another
// exception, a crash, a sanitizer report) is a bug. Words are separated by NUL, space, tab or
// newline bytes; "--name=value" words are the interesting ones (tests/fuzz/fuzz_flags.dict).
//
//   fuzz_flags -dict=tests/fuzz/fuzz_flags.dict -max_len=256 corpus/
//
// Built by tests/fuzz/CMakeLists.txt against resnet_cifar_flags (the sanitizer build compiles
// every library with -fsanitize=fuzzer-no-link, so the parser is instrumented); its dictionary
// and max_len come from fuzz_flags.options.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/common/flags.h"
#include "apps/resnet_cifar/resnet_cifar_flags.h"

namespace {

bool is_separator(uint8_t c) { return c == 0 || c == ' ' || c == '\t' || c == '\n'; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words{"resnet_cifar"};
  std::string word;
  for (size_t i = 0; i < size; ++i) {
    if (is_separator(data[i])) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(char(data[i]));
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);  // argv[argc], as main() gets it

  // Each input starts from the defaults, as a fresh process would.
  apps::reset_flags_to_defaults();
  try {
    const resnet_cifar::Options o =
        resnet_cifar::parse_flags(int(words.size()), argv.data(), apps::ParseMode::kNoExit);
    // What parse_flags promises the app: every value in its range.
    if (o.batch_size < 1 || o.train_epochs < 1 || o.train_steps < 0 || o.log_steps < 1 ||
        o.num_cpu_replicas < 1 || o.num_gpus < 0 || o.num_packs < 1 || o.epochs_between_evals < 1) {
      __builtin_trap();
    }
  } catch (const apps::FlagError&) {
    // A clear refusal is a correct answer.
  }
  return 0;
}

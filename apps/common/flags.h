// The apps' command lines, on Abseil flags (what TensorFlow's official resnet_cifar_main.py uses,
// through absl.flags). Each app defines its flags with ABSL_FLAG in its own <app>_flags.cc and
// parses them with parse_command_line():
//
//   ABSL_FLAG(apps::Ranged<int, 1, 1000000>, epochs, 15, "Training epochs.");
//   apps::parse_command_line(argc, argv, "Trains a CNN on MNIST.");
//   const int epochs = absl::GetFlag(FLAGS_epochs).value;
//
// Syntax as absl users know it: --name=value or --name value, --flag / --noflag for booleans,
// -- ends the flags, --help / --helpfull / --helpmatch=S / --version, --flagfile=F,
// --fromenv=a,b, --undefok=a,b.
//
// Every numeric flag is an apps::Ranged: absl's parser itself rejects a value that is not a whole
// number or lies outside the range, and the error names the range, wherever the value came from
// (command line, --flagfile, --fromenv). Nothing is truncated or clamped.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <absl/flags/flag.h>
#include <absl/strings/string_view.h>

#include "apps/common/flag_error.h"

namespace apps {

// An integer flag whose type carries its allowed range [Min, Max]; T is the type the app uses
// (int for epochs, int64_t for steps), so a value that passed the parser fits it.
template <typename T, int64_t Min, int64_t Max>
struct Ranged {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  static_assert(Min <= Max && Min >= int64_t(std::numeric_limits<T>::min()) &&
                    uint64_t(Max) <= uint64_t(std::numeric_limits<T>::max()),
                "the range must fit the flag's type");
  static constexpr int64_t kMin = Min, kMax = Max;

  T value{};

  constexpr Ranged() = default;
  // Implicit: ABSL_FLAG's default is a plain number.
  constexpr Ranged(T v) : value(v) {}  // NOLINT(google-explicit-constructor)
};

// "a whole number from 1 to 1000000", "a whole number >= 0".
std::string range_text(int64_t min, int64_t max);

// Strict decimal integer: optional '-', digits, nothing else (no spaces, '+', hex, exponent or
// trailing text), and within [min, max]; otherwise false with *error set to "expected <range>".
// Custom flag types' parsers (AbslParseFlag) word their errors the same way.
bool parse_integer(std::string_view text, int64_t min, int64_t max, int64_t* out,
                   std::string* error);

// absl's hooks for Ranged (found by argument-dependent lookup).
template <typename T, int64_t Min, int64_t Max>
bool AbslParseFlag(absl::string_view text, Ranged<T, Min, Max>* flag, std::string* error) {
  int64_t v = 0;
  if (!parse_integer(std::string_view(text.data(), text.size()), Min, Max, &v, error)) return false;
  flag->value = T(v);
  return true;
}
template <typename T, int64_t Min, int64_t Max>
std::string AbslUnparseFlag(Ranged<T, Min, Max> flag) {
  return std::to_string(flag.value);
}

// How an app's parse_flags reads argv: kProgram as main() does (parse_command_line: --help
// prints and exits); kNoExit only sets and checks the flags (set_flags_from_argv) and never exits,
// for the tests and the fuzzer.
enum class ParseMode { kProgram, kNoExit };

// Sets the flags argv names, with absl's syntax and absl's value parsers, and never exits or
// prints: the first mistake throws FlagError naming the flag, what it expects and what it got
// (unknown flags, with the closest known name; positional arguments, which the apps do not
// take; a missing value). --flagfile / --fromenv / --tryfromenv are accepted but left to
// absl::ParseCommandLine (their values arrive there). Returns true when argv asks for usage
// output (--help, --helpfull, --helpshort, --helpmatch, --helpon, --helppackage, --version,
// --only_check_args), which only absl::ParseCommandLine prints.
// The fuzzer (tests/fuzz/fuzz_flags.cc) and the tests call this directly.
bool set_flags_from_argv(int argc, char** argv);

// Puts every flag of the program (absl's own aside) back to its default: the tests and the
// fuzzer parse many command lines in one process. (absl::FlagSaver would too, but logs a line
// per restored flag.)
void reset_flags_to_defaults();

// What an app calls first: set_flags_from_argv (so mistakes exit with status 2 through
// main_guard.h, with our message), then absl::ParseCommandLine for what only it does: print
// --help / --helpfull / --version and exit (absl's convention: status 1 after help, 0 after
// --version), and read --flagfile / --fromenv (an error it finds there exits with status 1 and
// absl's "ERROR: ..." line). `usage` is the program's one-line description.
void parse_command_line(int argc, char** argv, const std::string& usage);

// parse_command_line or set_flags_from_argv, as `mode` says.
void read_argv(int argc, char** argv, ParseMode mode, const std::string& usage);

// FlagError "--model: 'resnet' is not one of: seed_cnn convnet conv_pool" unless the string
// flag's value is one of `choices`.
void require_one_of(const absl::Flag<std::string>& flag, const std::vector<std::string>& choices);

// The flag's name as absl knows it ("epochs"), for messages.
template <typename T>
std::string flag_name(const absl::Flag<T>& flag) {
  return std::string(absl::GetFlagReflectionHandle(flag).Name());
}

}  // namespace apps

#include "apps/common/flags.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <absl/flags/commandlineflag.h>
#include <absl/flags/parse.h>
#include <absl/flags/reflection.h>
#include <absl/flags/usage.h>
#include <absl/flags/usage_config.h>

namespace apps {
namespace {

// absl's own flags: the usage flags are not registered (absl::ParseCommandLine recognises them
// by name); the generator flags are, but setting them by hand would not run them.
const std::set<std::string_view> kUsageFlags = {"help",        "helpfull",  "helpshort",
                                                "helppackage", "helpon",    "helpmatch",
                                                "version",     "only_check_args"};
const std::set<std::string_view> kGeneratorFlags = {"flagfile", "fromenv", "tryfromenv"};

// Debian's absl has its own string_view (not std::string_view's alias).
absl::CommandLineFlag* find_flag(std::string_view name) {
  return absl::FindCommandLineFlag(absl::string_view(name.data(), name.size()));
}

bool is_absl_file(std::string_view file) {
  return file.find("absl/flags/") != std::string_view::npos;
}

// The registered flags of the program (absl's own left out), for suggestions.
std::vector<std::string> program_flag_names() {
  std::vector<std::string> names;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!is_absl_file(flag->Filename())) names.emplace_back(name);
  }
  return names;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string unknown_flag_message(const std::string& name) {
  std::string best;
  size_t best_distance = 3;  // a typo or two; anything further is not a suggestion
  for (const std::string& known : program_flag_names()) {
    const size_t d = edit_distance(name, known);
    if (d < best_distance) best_distance = d, best = known;
  }
  return "unknown flag --" + name + (best.empty() ? "" : " (did you mean --" + best + "?)") +
         "; run with --help for the list";
}

// Quotes argv text in messages, escaping what would garble a terminal.
std::string quoted(std::string_view text) {
  std::string out = "'";
  for (const unsigned char c : text.substr(0, 200)) {
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out + (text.size() > 200 ? "...'" : "'");
}

// absl's error is "Illegal value '<v>' specified for flag '<name>'[; <what the parser said>]";
// the last part is ours for apps::Ranged ("expected ...") and empty for absl's built-in types.
std::string bad_value_message(const absl::CommandLineFlag& flag, std::string_view value,
                              const std::string& absl_error) {
  const std::string name(flag.Name());
  std::string expected;
  if (const size_t sep = absl_error.find("'; "); sep != std::string::npos) {
    expected = absl_error.substr(sep + 3);  // "expected a whole number from 1 to 1000000"
  } else if (flag.IsOfType<bool>()) {
    expected = "expected true or false (or --" + name + " / --no" + name + ")";
  } else {
    expected = "which absl rejects: " + absl_error;
  }
  return "--" + name + ": got " + quoted(value) + ", " + expected + " (see --help)";
}

std::vector<std::string> split_commas(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    if (end > start) out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string range_text(int64_t min, int64_t max) {
  if (max == std::numeric_limits<int64_t>::max()) return "a whole number >= " + std::to_string(min);
  return "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
}

bool parse_integer(std::string_view text, int64_t min, int64_t max, int64_t* out,
                   std::string* error) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  // from_chars takes a leading '-' and digits only, so " 5", "+5", "0x10", "1e2" and "50abc"
  // fail here; ERANGE is a number past int64's range.
  if (text.empty() || ec != std::errc() || ptr != end || v < min || v > max) {
    *error = "expected " + range_text(min, max);
    return false;
  }
  *out = v;
  return true;
}

bool set_flags_from_argv(int argc, char** argv) {
  bool usage = false;
  std::vector<std::string> unknown, undefok;
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    std::string_view arg = word;
    // absl: a word not starting with '-', or "-" alone, is a positional argument.
    if (arg.size() < 2 || arg[0] != '-') {
      // `--epoch 3`: the unknown flag is the mistake, "3" only its consequence.
      if (!unknown.empty()) throw FlagError(unknown_flag_message(unknown.front()));
      std::string hint = "the apps take only flags (--name=value)";
      // `--eval_only false` sets eval_only and leaves "false" over.
      if (i > 1) {
        std::string_view prev = argv[i - 1];
        while (!prev.empty() && prev[0] == '-') prev.remove_prefix(1);
        if (const absl::CommandLineFlag* f = find_flag(prev);
            f != nullptr && f->IsOfType<bool>()) {
          hint = "a true/false flag takes its value after '=': --" + std::string(prev) + "=" +
                 std::string(arg);
        }
      }
      throw FlagError("unexpected argument " + quoted(word) + ": " + hint + " (see --help)");
    }
    arg.remove_prefix(1);
    if (arg[0] == '-') arg.remove_prefix(1);  // -name and --name alike, as absl
    if (arg.empty()) {  // "--": absl stops there and leaves the rest as positional arguments
      if (i + 1 < argc) {
        throw FlagError("unexpected argument " + quoted(argv[i + 1]) + " after '--': the apps "
                        "take only flags (see --help)");
      }
      break;
    }
    const size_t eq = arg.find('=');
    const std::string name(arg.substr(0, eq));
    const bool has_value = eq != std::string_view::npos;
    std::string value(has_value ? arg.substr(eq + 1) : std::string_view());
    if (name.empty() || name[0] == '-') {
      throw FlagError("malformed argument " + quoted(word) + ": flags look like --name=value "
                      "(see --help)");
    }
    if (kUsageFlags.count(name)) {
      usage = true;
      continue;
    }
    absl::CommandLineFlag* flag = find_flag(name);
    bool negative = false;
    if (flag == nullptr && name.rfind("no", 0) == 0) {
      flag = find_flag(std::string_view(name).substr(2));
      negative = flag != nullptr;
    }
    if (flag == nullptr || flag->IsRetired()) {
      unknown.push_back(name);  // an error at the end unless --undefok names it, as absl
      continue;
    }
    const std::string flag_name(flag->Name());
    if (flag->IsOfType<bool>()) {
      if (negative && has_value) {
        throw FlagError("--no" + flag_name + " takes no value: write --" + flag_name + "=" +
                        value + " or --no" + flag_name);
      }
      if (!has_value) value = negative ? "false" : "true";
    } else {
      if (negative) {
        throw FlagError("--" + name + ": only true/false flags have a --no form, and --" +
                        flag_name + " is not one (see --help)");
      }
      if (!has_value) {
        if (i + 1 == argc) {
          throw FlagError("--" + flag_name + " needs a value: --" + flag_name +
                          "=VALUE (see --help)");
        }
        value = argv[++i];
        // `--model_dir --eval_only`: the value was forgotten (absl would only warn).
        if (value.rfind("-", 0) == 0 && flag->IsOfType<std::string>()) {
          std::string_view next = value;
          while (!next.empty() && next[0] == '-') next.remove_prefix(1);
          next = next.substr(0, next.find('='));
          if (next.empty() || find_flag(next) || kUsageFlags.count(next)) {
            throw FlagError("--" + flag_name + " needs a value, but the next argument is the " +
                            "flag " + quoted(value) + "; write --" + flag_name + "=VALUE");
          }
        }
      }
    }
    if (kGeneratorFlags.count(flag_name)) continue;  // absl::ParseCommandLine runs them
    if (flag_name == "undefok") {
      for (std::string& n : split_commas(value)) undefok.push_back(std::move(n));
      continue;
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) throw FlagError(bad_value_message(*flag, value, error));
  }
  for (const std::string& name : unknown) {
    const bool ok = std::find(undefok.begin(), undefok.end(), name) != undefok.end() ||
                    (name.rfind("no", 0) == 0 &&
                     std::find(undefok.begin(), undefok.end(), name.substr(2)) != undefok.end());
    if (!ok) throw FlagError(unknown_flag_message(name));
  }
  return usage;
}

void reset_flags_to_defaults() {
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (is_absl_file(flag->Filename())) continue;
    std::string error;
    if (!flag->ParseFrom(flag->DefaultValue(), &error)) {
      throw strata::InternalError("flag --" + std::string(name) +
                                  ": its default does not parse: " + error);
    }
  }
}

void parse_command_line(int argc, char** argv, const std::string& usage) {
  absl::FlagsUsageConfig config;
  // --help lists the app's own flags (absl's default looks for them in <program>.cc only);
  // --helpfull adds absl's.
  config.contains_help_flags = [](absl::string_view file) {
    return !is_absl_file(std::string_view(file.data(), file.size()));
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  config.contains_helppackage_flags = config.contains_help_flags;
  // "Flags from apps/mnist/mnist_flags.cc", whatever the build's path to the sources.
  config.normalize_filename = [](absl::string_view file) {
    for (const char* root : {"apps/", "bench/", "absl/"}) {
      if (const size_t at = file.rfind(root); at != absl::string_view::npos) {
        return std::string(file.substr(at));
      }
    }
    return std::string(file);
  };
#ifdef STRATA_VERSION
  config.version_string = [] { return std::string("Strata ") + STRATA_VERSION + "\n"; };
#endif
  absl::SetFlagsUsageConfig(config);
  absl::SetProgramUsageMessage(usage);
  set_flags_from_argv(argc, argv);
  absl::ParseCommandLine(argc, argv);
}

void read_argv(int argc, char** argv, ParseMode mode, const std::string& usage) {
  if (mode == ParseMode::kProgram) {
    parse_command_line(argc, argv, usage);
  } else {
    set_flags_from_argv(argc, argv);
  }
}

void require_one_of(const absl::Flag<std::string>& flag, const std::vector<std::string>& choices) {
  const std::string value = absl::GetFlag(flag);
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return;
  std::string list;
  for (const std::string& c : choices) list += " " + c;
  throw FlagError("--" + flag_name(flag) + ": " + quoted(value) + " is not one of:" + list +
                  " (see --help)");
}

}  // namespace apps

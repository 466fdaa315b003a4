// A tiny command-line flag parser for the apps, in the style of absl/TF flags:
//
//   Flags flags("mnist", "Trains a CNN on MNIST.");
//   auto& epochs = flags.add_int("epochs", 15, "Number of epochs.");
//   flags.parse(argc, argv);          // --epochs=3 or --epochs 3; --help prints every flag
//
// Unknown flags and malformed values are errors that name the flag and point to --help.
#pragma once

#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/core/error.h"

namespace apps {

// A strata::Error like everything else the apps throw, so one catch reports them all.
class FlagError : public strata::Error {
 public:
  using strata::Error::Error;
};

class Flags {
 public:
  Flags(std::string program, std::string description)
      : program_(std::move(program)), description_(std::move(description)) {}

  int64_t& add_int(const std::string& name, int64_t def, const std::string& help) {
    return add<int64_t>(name, def, help, "int").value;
  }
  double& add_double(const std::string& name, double def, const std::string& help) {
    return add<double>(name, def, help, "float").value;
  }
  bool& add_bool(const std::string& name, bool def, const std::string& help) {
    return add<bool>(name, def, help, "bool").value;
  }
  std::string& add_string(const std::string& name, std::string def, const std::string& help,
                          std::vector<std::string> choices = {}) {
    auto& f = add<std::string>(name, std::move(def), help, "string");
    f.choices = std::move(choices);
    return f.value;
  }

  // Parses argv; prints usage and exits 0 on --help; throws FlagError otherwise.
  void parse(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--help" || arg == "-h" || arg == "--helpfull") {
        std::cout << usage();
        std::exit(0);
      }
      if (arg.rfind("--", 0) != 0) throw FlagError("unexpected argument '" + arg + "'; flags look like --name=value (see --help)");
      arg = arg.substr(2);
      std::string name = arg, value;
      bool has_value = false;
      if (auto eq = arg.find('='); eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
        has_value = true;
      }
      auto it = flags_.find(name);
      if (it == flags_.end() && name.rfind("no", 0) == 0 && flags_.count(name.substr(2)) &&
          flags_[name.substr(2)]->type == "bool" && !has_value) {
        flags_[name.substr(2)]->set("false");
        continue;
      }
      if (it == flags_.end()) throw FlagError("unknown flag --" + name + " (run with --help for the list)");
      if (!has_value) {
        if (it->second->type == "bool") {
          value = "true";
        } else if (i + 1 < argc) {
          value = argv[++i];
        } else {
          throw FlagError("flag --" + name + " needs a value");
        }
      }
      it->second->set(value);
    }
  }

  std::string usage() const {
    std::string s = program_ + ": " + description_ + "\n\nFlags:\n";
    for (const std::string& name : order_) {
      const auto& f = *flags_.at(name);
      s += "  --" + name + " (" + f.type + ", default " + f.default_text + ")\n      " + f.help;
      if (!f.choices.empty()) {
        s += " One of:";
        for (const auto& c : f.choices) s += " " + c;
        s += ".";
      }
      s += "\n";
    }
    return s;
  }

 private:
  struct FlagBase {
    std::string name, type, help, default_text;
    std::vector<std::string> choices;
    virtual ~FlagBase() = default;
    virtual void set(const std::string& text) = 0;
    [[noreturn]] void bad(const std::string& text) const {
      throw FlagError("flag --" + name + ": '" + text + "' is not a valid " + type + " (see --help)");
    }
  };
  template <typename T>
  struct Flag : FlagBase {
    T value;
    void set(const std::string& text) override {
      if constexpr (std::is_same_v<T, int64_t>) {
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0') bad(text);
        value = v;
      } else if constexpr (std::is_same_v<T, double>) {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0') bad(text);
        value = v;
      } else if constexpr (std::is_same_v<T, bool>) {
        if (text == "true" || text == "1" || text == "True") value = true;
        else if (text == "false" || text == "0" || text == "False") value = false;
        else bad(text);
      } else {
        if (!choices.empty()) {
          bool ok = false;
          for (const auto& c : choices) ok = ok || c == text;
          if (!ok) {
            std::string list;
            for (const auto& c : choices) list += " " + c;
            throw FlagError("flag --" + name + ": '" + text + "' is not one of:" + list);
          }
        }
        value = text;
      }
    }
  };

  template <typename T>
  Flag<T>& add(const std::string& name, T def, const std::string& help, const char* type) {
    auto f = std::make_unique<Flag<T>>();
    f->name = name;
    f->type = type;
    f->help = help;
    f->value = def;
    if constexpr (std::is_same_v<T, std::string>) {
      f->default_text = def.empty() ? "\"\"" : def;
    } else if constexpr (std::is_same_v<T, bool>) {
      f->default_text = def ? "true" : "false";
    } else {
      f->default_text = std::to_string(def);
    }
    Flag<T>& ref = *f;
    order_.push_back(name);
    flags_[name] = std::move(f);
    return ref;
  }

  std::string program_, description_;
  std::vector<std::string> order_;
  std::map<std::string, std::unique_ptr<FlagBase>> flags_;
};

}  // namespace apps

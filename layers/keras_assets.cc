#include "layers/keras_assets.h"

#include <cerrno>
#include <cstdlib>

#include "framework/core/error.h"
#include "framework/saving/keras3_weights_format.h"
#include "layers/preprocessing/integer_lookup.h"
#include "layers/preprocessing/string_lookup.h"

namespace strata {
namespace {

// "a\nb\nc" -> {"a", "b", "c"}, as Python's str.split("\n").
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t end = text.find('\n', start);
    out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

std::vector<int64_t> integers(const std::vector<std::string>& lines, const std::string& where) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const char* s = lines[i].c_str();
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s, &end, 10);
    if (lines[i].empty() || *end != '\0' || errno != 0) {
      throw ValueError("Loading: line " + std::to_string(i + 1) + " of " + where + " is '" +
                       lines[i] + "', expected an integer token of an IntegerLookup vocabulary");
    }
    out.push_back(int64_t(v));
  }
  return out;
}

// saving_lib's asset paths mirror the weights file's: assets/layers/<key>/..., recursively.
void load_assets(const saving::KerasArchive& archive, const Model& model, const std::string& path) {
  for (const saving::Keras3Layer& child : saving::keras3_layers(model)) {
    if (!child.layer) continue;
    const std::string child_path = path + "layers/" + child.key;
    if (const auto* nested = dynamic_cast<const Model*>(child.layer.get())) {
      load_assets(archive, *nested, child_path + "/");
      continue;
    }
    const std::string file = "assets/" + child_path + "/vocabulary.txt";
    if (!archive.contains(file)) continue;
    const std::vector<std::string> lines = lines_of(archive.read(file));
    if (auto* strings = dynamic_cast<StringLookup*>(child.layer.get())) {
      strings->set_vocabulary(lines);
    } else if (auto* ints = dynamic_cast<IntegerLookup*>(child.layer.get())) {
      ints->set_vocabulary(integers(lines, "'" + file + "' in '" + archive.path() + "'"));
    }
  }
}

}  // namespace

void load_lookup_assets(const saving::KerasArchive& archive, Model& model) {
  load_assets(archive, model, "");
}

}  // namespace strata

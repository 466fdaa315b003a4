// Reading evaluate()'s results: a missing metric (an empty test set, a model compiled without
// "accuracy") is a clear error, never std::map::at's std::out_of_range.
#pragma once

#include <map>
#include <string>

#include "framework/core/error.h"

namespace apps {

inline double score(const std::map<std::string, double>& scores, const std::string& name,
                    const std::string& evaluated) {
  if (const auto it = scores.find(name); it != scores.end()) return it->second;
  std::string present;
  for (const auto& [key, value] : scores) present += (present.empty() ? "" : ", ") + key;
  throw strata::ValueError(
      "evaluating " + evaluated + " gave no '" + name + "' (" +
      (present.empty() ? std::string("no results at all: is the test set empty?")
                       : "only " + present) +
      "); check the test data (--data_dir) and --batch_size");
}

}  // namespace apps

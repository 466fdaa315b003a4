// Model.summary(): Keras' table.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "framework/model/functional_graph.h"
#include "framework/model/model.h"

namespace strata {
namespace {

constexpr int kLineLength = 65;
constexpr int kColumns[] = {29, 55, 65};  // Keras' positions [.45, .85, 1.] of 65

std::string shape_text(const Shape& s) {
  if (s.rank() == 0) return "?";
  std::string t = "(";
  for (int i = 0; i < s.rank(); ++i) {
    if (i) t += ", ";
    t += s[i] < 0 ? "None" : std::to_string(s[i]);
  }
  return t + (s.rank() == 1 ? ",)" : ")");
}

std::string row(const std::vector<std::string>& fields) {
  std::string line;
  int start = 0;
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string f = (i == 0 ? " " : "") + fields[i];
    const int width = kColumns[i] - start;
    if (int(f.size()) > width - 1) f = f.substr(0, size_t(std::max(0, width - 1)));
    line += f + std::string(size_t(width - int(f.size())), ' ');
    start = kColumns[i];
  }
  return line;
}

std::string readable_size(double bytes) {
  const char* units[] = {"Byte", "KB", "MB", "GB", "TB", "PB"};
  int i = 0;
  while (bytes >= 1024 && i < 5) {
    bytes /= 1024;
    ++i;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %s", bytes, units[i]);
  return buf;
}

int64_t count(const std::vector<VariablePtr>& vars) {
  int64_t n = 0;
  for (const auto& v : vars) n += v->shape().numel();
  return n;
}

}  // namespace

std::string Model::summary_string() const {
  std::ostringstream out;
  out << "Model: \"" << name() << "\"\n";
  out << std::string(kLineLength, '_') << "\n";
  out << row({"Layer (type)", "Output Shape", "Param #"}) << "\n";
  out << std::string(kLineLength, '=') << "\n";
  if (graph_) {
    for (const KerasTensor& in : graph_->inputs()) {
      out << row({in.node()->input_name + " (InputLayer)", "[" + shape_text(in.shape()) + "]", "0"})
          << "\n" << std::string(kLineLength, ' ') << "\n";
    }
  }
  const auto all = layers();
  if (!graph_ && !built() && all.empty()) out << " (no layers)\n";
  for (const auto& l : all) {
    const std::string shape = l->output_shape().rank() ? shape_text(l->output_shape()) : "(unbuilt)";
    out << row({l->name() + " (" + l->class_name() + ")", shape, std::to_string(l->count_params())})
        << "\n" << std::string(kLineLength, ' ') << "\n";
  }
  out << std::string(kLineLength, '=') << "\n";
  const int64_t trainable = count(trainable_weights()), frozen = count(non_trainable_weights());
  out << "Total params: " << (trainable + frozen) << " (" << readable_size(4.0 * double(trainable + frozen)) << ")\n";
  out << "Trainable params: " << trainable << " (" << readable_size(4.0 * double(trainable)) << ")\n";
  out << "Non-trainable params: " << frozen << " (" << readable_size(4.0 * double(frozen)) << ")\n";
  out << std::string(kLineLength, '_') << "\n";
  return out.str();
}

void Model::summary() const { std::cout << summary_string() << std::flush; }

}  // namespace strata

#include "framework/callbacks/progbar_logger.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>

namespace strata {

ProgbarLogger::ProgbarLogger(std::ostream* out, int interactive)
    : out_(out ? out : &std::cout),
      interactive_(interactive < 0 ? (out == nullptr && isatty(STDOUT_FILENO)) : interactive != 0) {}

std::string ProgbarLogger::format_value(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, std::fabs(v) > 1e-3 ? "%.4f" : "%.4e", v);
  return buf;
}

std::string ProgbarLogger::bar(int64_t current, int64_t target) {
  constexpr int kWidth = 30;
  if (target <= 0) return "";
  const int filled = int(double(kWidth) * double(std::min(current, target)) / double(target));
  std::string b = "[";
  if (filled > 0) {
    b += std::string(size_t(filled - 1), '=');
    b += current < target ? '>' : '=';
  }
  b += std::string(size_t(kWidth - filled), '.');
  return b + "]";
}

namespace {
std::string format_duration(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0fs", seconds);
  return buf;
}
std::string format_per_step(double seconds) {
  char buf[32];
  if (seconds >= 1) {
    std::snprintf(buf, sizeof buf, "%.0fs/step", seconds);
  } else if (seconds >= 1e-3) {
    std::snprintf(buf, sizeof buf, "%.0fms/step", seconds * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0fus/step", seconds * 1e6);
  }
  return buf;
}
std::string format_logs(const Logs& logs) {
  std::string s;
  for (const auto& [k, v] : logs.items()) s += " - " + k + ": " + ProgbarLogger::format_value(v);
  return s;
}
}  // namespace

void ProgbarLogger::on_train_begin(const Logs&) { in_fit_ = true; }

void ProgbarLogger::on_epoch_begin(int epoch, const Logs&) {
  target_ = params().steps;
  seen_ = 0;
  start_ = last_draw_ = std::chrono::steady_clock::now();
  last_width_ = 0;
  if (params().verbose >= 1) {
    *out_ << "Epoch " << (epoch + 1) << "/" << params().epochs << "\n" << std::flush;
  }
}

void ProgbarLogger::render(int64_t current, const Logs& logs, bool final) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double per_step = current > 0 ? elapsed / double(current) : 0.0;
  const std::string count = target_ > 0 ? std::to_string(current) + "/" + std::to_string(target_)
                                        : std::to_string(current) + "/Unknown";
  std::string line;
  if (params().verbose == 2) {
    line = count + " - " + format_duration(elapsed) + format_logs(logs) + " - " +
           format_per_step(per_step);
  } else if (final) {
    line = count + " " + bar(current, target_) + " - " + format_duration(elapsed) + " " +
           format_per_step(per_step) + format_logs(logs);
  } else {
    const double eta = target_ > 0 ? per_step * double(target_ - current) : 0.0;
    line = count + " " + bar(current, target_) + " - ETA: " + format_duration(eta) + format_logs(logs);
  }
  if (interactive_ && params().verbose == 1) {
    // Redraw in place, blanking what a longer previous line left behind.
    const size_t width = line.size();
    if (width < last_width_) line += std::string(last_width_ - width, ' ');
    last_width_ = width;
    *out_ << "\r" << line << (final ? "\n" : "") << std::flush;
  } else if (final) {
    *out_ << line << "\n" << std::flush;
  }
  last_draw_ = now;
}

void ProgbarLogger::on_train_batch_end(int batch, const Logs& logs) {
  seen_ = batch + 1;
  if (!interactive_ || params().verbose != 1) return;
  const auto now = std::chrono::steady_clock::now();
  // A redraw costs a terminal write: at most 20 per second, and always the last step.
  if (std::chrono::duration<double>(now - last_draw_).count() < 0.05 && batch + 1 != target_) return;
  render(batch + 1, logs, false);
}

void ProgbarLogger::on_epoch_end(int epoch, const Logs& logs) {
  if (params().verbose >= 1) render(target_ > 0 ? target_ : seen_, logs, true);
}

void ProgbarLogger::on_test_begin(const Logs&) {
  standalone_eval_ = !in_fit_;
  if (standalone_eval_) {
    start_ = last_draw_ = std::chrono::steady_clock::now();
    last_width_ = 0;
    target_ = params().steps;
    seen_ = 0;
  }
}

void ProgbarLogger::on_test_batch_end(int batch, const Logs& logs) {
  if (standalone_eval_) seen_ = batch + 1;
  if (!standalone_eval_ || !interactive_ || params().verbose != 1) return;
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_draw_).count() < 0.05 && batch + 1 != target_) return;
  render(batch + 1, logs, false);
}

void ProgbarLogger::on_test_end(const Logs& logs) {
  if (standalone_eval_ && params().verbose >= 1) render(target_ > 0 ? target_ : seen_, logs, true);
  standalone_eval_ = false;
}

}  // namespace strata

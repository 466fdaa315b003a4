#include "distribute/parameter_server/sidecar_evaluator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/saving/save_model.h"
#include "framework/summary/summary_writer.h"

namespace strata::distribute {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The name without the checkpoint suffix, so that "h5" gives no step digit.
std::string stem_of(const std::string& name) {
  for (const char* suffix : {".weights.h5", ".h5", ".hdf5", ".keras"}) {
    if (ends_with(name, suffix)) return name.substr(0, name.size() - std::string(suffix).size());
  }
  return name;
}

bool is_checkpoint_name(const std::string& name) {
  return !name.empty() && name[0] != '.' && stem_of(name) != name;
}

struct Candidate {
  std::string path;
  fs::file_time_type mtime;
  std::string key;  // path and modification time: a rewritten file is a new checkpoint
};

// The checkpoints in `dir`, oldest first; none when it does not exist (yet).
std::vector<Candidate> list_checkpoints(const std::string& dir) {
  std::vector<Candidate> found;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return found;
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (!is_checkpoint_name(name)) continue;
    std::error_code type_ec;
    const bool regular = entry.is_regular_file(type_ec);
    // A .keras directory is a Keras 3 archive saved unzipped; other directories are workers'.
    if (!regular && !(entry.is_directory(type_ec) && ends_with(name, ".keras"))) continue;
    std::error_code time_ec;
    const fs::file_time_type mtime = entry.last_write_time(time_ec);
    if (time_ec) continue;  // removed between listing and looking: gone, not an error
    found.push_back({entry.path().string(), mtime,
                     entry.path().string() + "@" +
                         std::to_string(mtime.time_since_epoch().count())});
  }
  std::sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    return a.mtime != b.mtime ? a.mtime < b.mtime : a.path < b.path;
  });
  return found;
}

// The first integer in the file name (ModelCheckpoint's {epoch}), if any.
std::optional<int64_t> number_in_name(const std::string& path) {
  const std::string stem = stem_of(fs::path(path).filename().string());
  const size_t begin = stem.find_first_of("0123456789");
  if (begin == std::string::npos) return std::nullopt;
  const size_t end = std::min(stem.find_first_not_of("0123456789", begin), stem.size());
  if (end - begin > 18) return std::nullopt;  // would overflow int64
  return std::stoll(stem.substr(begin, end - begin));
}

std::string format_metrics(const std::map<std::string, double>& metrics) {
  std::string out;
  for (const auto& [name, value] : metrics) {
    char number[32];
    std::snprintf(number, sizeof number, "%.6g", value);
    out += (out.empty() ? "" : " ") + name + "=" + number;
  }
  return out;
}

std::string seconds(double s) {
  std::ostringstream out;
  out << s << " s";
  return out.str();
}

}  // namespace

SidecarEvaluator::SidecarEvaluator(std::shared_ptr<Model> model, data::Dataset data,
                                   std::string checkpoint_dir, SidecarEvaluatorOptions options)
    : model_(std::move(model)),
      data_(std::move(data)),
      checkpoint_dir_(std::move(checkpoint_dir)),
      options_(std::move(options)) {
  const std::string who = "SidecarEvaluator: ";
  if (!model_) throw ValueError(who + "model is null; pass the compiled model to evaluate");
  if (!model_->compiled()) {
    throw ValueError(who + "model '" + model_->name() + "' is not compiled; compile it with the " +
                     "training model's loss and metrics before start(), evaluate needs them");
  }
  if (checkpoint_dir_.empty()) {
    throw ValueError(who + "checkpoint_dir is empty; pass the directory ModelCheckpoint writes to");
  }
  const auto& o = options_;
  if (o.steps_ != -1 && o.steps_ < 1) {
    throw ValueError(who + "steps must be -1 (the whole dataset) or >= 1, got " +
                     std::to_string(o.steps_));
  }
  if (o.max_evaluations_ != -1 && o.max_evaluations_ < 1) {
    throw ValueError(who + "max_evaluations must be -1 (until the timeout) or >= 1, got " +
                     std::to_string(o.max_evaluations_));
  }
  if (!(o.poll_interval_seconds_ > 0)) {
    throw ValueError(who + "poll_interval_seconds must be > 0, got " +
                     seconds(o.poll_interval_seconds_));
  }
  if (o.timeout_seconds_ != -1 && !(o.timeout_seconds_ >= 0)) {
    throw ValueError(who + "timeout_seconds must be -1 (wait forever) or >= 0, got " +
                     seconds(o.timeout_seconds_));
  }
  if (o.max_load_attempts_ < 1) {
    throw ValueError(who + "max_load_attempts must be >= 1, got " +
                     std::to_string(o.max_load_attempts_));
  }
}

SidecarEvaluator::~SidecarEvaluator() = default;

void SidecarEvaluator::say(const std::string& line) const {
  if (options_.log_) {
    options_.log_("SidecarEvaluator: " + line);
  } else {
    std::cerr << "SidecarEvaluator: " << line << std::endl;
  }
}

SidecarEvaluator::Loaded SidecarEvaluator::load(const std::string& path, const std::string& key) {
  std::string error;
  try {
    load_weights(*model_, path);
    return Loaded::kYes;
  } catch (const IOError& e) {  // unreadable, or removed between listing and opening
    error = e.what();
  } catch (const ValueError& e) {  // corrupt, or half-written by a writer that is not atomic
    error = e.what();
  }
  const int failures = ++failures_[key];
  if (failures < options_.max_load_attempts_) {
    say("cannot load '" + path + "' yet (attempt " + std::to_string(failures) + " of " +
        std::to_string(options_.max_load_attempts_) + "), retrying at the next poll: " + error);
    return Loaded::kRetry;
  }
  say("skipping '" + path + "': it failed to load " + std::to_string(failures) +
      " times; last error: " + error + ". Rewrite or remove it; later checkpoints go on");
  skipped_.push_back(path);
  return Loaded::kSkipped;
}

void SidecarEvaluator::write_summaries(const SidecarEvaluation& evaluation) {
  if (options_.log_dir_.empty()) return;
  // TensorFlow's TensorBoard callback writes evaluate()'s results to the validation run.
  if (!writer_) {
    writer_ = summary::create_file_writer((fs::path(options_.log_dir_) / "validation").string());
  }
  for (const auto& [name, value] : evaluation.metrics) {
    writer_->scalar("evaluation_" + name + "_vs_iterations", value, evaluation.step);
  }
  writer_->flush();  // TensorBoard, another process, sees each point as it comes
}

std::vector<SidecarEvaluation> SidecarEvaluator::start() {
  std::vector<SidecarEvaluation> history;
  std::set<std::string> done;  // keys evaluated or skipped
  const auto poll = std::chrono::duration<double>(options_.poll_interval_seconds_);
  Clock::time_point last_new = Clock::now();
  const auto finish = [&] {
    if (writer_) writer_->close();
    writer_.reset();
    return history;
  };
  say("watching '" + checkpoint_dir_ + "' for checkpoints");
  for (;;) {
    for (const Candidate& c : list_checkpoints(checkpoint_dir_)) {
      if (done.count(c.key)) continue;
      const Loaded loaded = load(c.path, c.key);
      if (loaded == Loaded::kRetry) break;  // keep the order: later ones wait for this one
      done.insert(c.key);
      if (loaded == Loaded::kSkipped) continue;
      SidecarEvaluation e;
      e.checkpoint = c.path;
      e.step = number_in_name(c.path).value_or(int64_t(history.size()) + 1);
      e.metrics = model_->evaluate(data_, EvaluateOptions()
                                              .steps(options_.steps_)
                                              .verbose(options_.verbose_)
                                              .callbacks(options_.callbacks_));
      write_summaries(e);
      say("evaluated '" + c.path + "' (step " + std::to_string(e.step) + "): " +
          format_metrics(e.metrics));
      history.push_back(std::move(e));
      last_new = Clock::now();
      if (options_.max_evaluations_ != -1 &&
          int64_t(history.size()) >= options_.max_evaluations_) {
        say("evaluated " + std::to_string(history.size()) + " checkpoints (max_evaluations); done");
        return finish();
      }
    }
    const double waited = std::chrono::duration<double>(Clock::now() - last_new).count();
    if (options_.timeout_seconds_ != -1 && waited >= options_.timeout_seconds_) {
      if (history.empty()) {
        finish();
        std::error_code ec;
        const bool exists = fs::is_directory(checkpoint_dir_, ec);
        throw IOError("SidecarEvaluator: no checkpoint to evaluate appeared in '" +
                      checkpoint_dir_ + "' within timeout_seconds=" +
                      seconds(options_.timeout_seconds_) + " (the directory " +
                      (exists ? "exists but holds no loadable .h5/.keras file"
                              : "does not exist") +
                      "); expected the files ModelCheckpoint writes there. Point checkpoint_dir "
                      "at ModelCheckpoint's directory, or raise timeout_seconds");
      }
      say("no new checkpoint in '" + checkpoint_dir_ + "' for " +
          seconds(options_.timeout_seconds_) + " (timeout_seconds); done after " +
          std::to_string(history.size()) + " evaluations");
      return finish();
    }
    // Sleep a poll interval, or less when the timeout comes first.
    auto nap = std::chrono::duration<double>(poll);
    if (options_.timeout_seconds_ != -1) {
      nap = std::min(nap, std::chrono::duration<double>(options_.timeout_seconds_ - waited));
    }
    std::this_thread::sleep_for(nap);
  }
}

}  // namespace strata::distribute

#include "framework/summary/summary_writer.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <system_error>

#include "framework/core/error.h"

namespace strata::summary {
namespace {

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

// TensorFlow's name: the pid and a per-process counter keep two writers of one directory (in one
// process or several, in the same second) from opening the same file.
std::string event_file_name(const std::string& suffix) {
  static std::atomic<int64_t> counter{0};
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%010lld", static_cast<long long>(std::time(nullptr)));
  return std::string("events.out.tfevents.") + seconds + "." + hostname() + "." +
         std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1)) +
         (suffix.empty() || suffix[0] == '.' ? "" : ".") + suffix;
}

}  // namespace

SummaryWriter::SummaryWriter(std::string logdir, SummaryWriterOptions options)
    : logdir_(std::move(logdir)), options_(std::move(options)) {
  if (options_.max_queue_ < 0 || options_.flush_millis_ < 0) {
    throw ValueError("SummaryWriter: max_queue and flush_millis must be >= 0, got " +
                     std::to_string(options_.max_queue_) + " and " +
                     std::to_string(options_.flush_millis_));
  }
  std::error_code ec;
  std::filesystem::create_directories(logdir_, ec);
  if (ec) {
    throw IOError("SummaryWriter: cannot create the log directory '" + logdir_ + "': " +
                  ec.message() + "; pass a log_dir you can write to");
  }
  path_ = (std::filesystem::path(logdir_) / event_file_name(options_.filename_suffix_)).string();
  try {
    file_ = std::make_unique<TFRecordWriter>(path_);
  } catch (const IOError& e) {
    throw IOError("SummaryWriter: cannot create an event file in '" + logdir_ + "' (" + e.what() +
                  "); pass a log_dir you can write to");
  }
  Event version;
  version.wall_time = wall_time_now();
  version.file_version = std::string(kFileVersion);
  file_->write(encode_event(version));
  flush();  // like TensorFlow: the file is recognisable as an event file from the start
}

SummaryWriter::~SummaryWriter() {
  try {
    close();
  } catch (const Error&) {
    // A destructor must not throw; callers who care call close() themselves.
  }
}

void SummaryWriter::scalar(const std::string& tag, double value, int64_t step) {
  Event event;
  event.step = step;
  event.scalars.push_back({tag, value});
  write(std::move(event));
}

void SummaryWriter::write(Event event) {
  if (event.wall_time == 0) event.wall_time = wall_time_now();
  std::lock_guard<std::mutex> lock(mu_);
  write_locked(event);
}

void SummaryWriter::write_locked(const Event& event) {
  if (!file_ || file_->closed()) {
    throw StateError("SummaryWriter: write to '" + path_ + "' after close(); create a new writer");
  }
  file_->write(encode_event(event));
  ++pending_;
  const auto since = std::chrono::steady_clock::now() - last_flush_;
  if (pending_ > options_.max_queue_ ||
      since >= std::chrono::milliseconds(options_.flush_millis_)) {
    file_->flush();
    pending_ = 0;
    last_flush_ = std::chrono::steady_clock::now();
  }
}

void SummaryWriter::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_) return;
  file_->flush();
  pending_ = 0;
  last_flush_ = std::chrono::steady_clock::now();
}

void SummaryWriter::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_) file_->close();
}

std::shared_ptr<SummaryWriter> create_file_writer(const std::string& logdir,
                                                  SummaryWriterOptions options) {
  return std::make_shared<SummaryWriter>(logdir, std::move(options));
}

}  // namespace strata::summary

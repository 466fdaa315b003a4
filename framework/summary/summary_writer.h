// SummaryWriter: writes TensorBoard event files, like TF2's tf.summary.create_file_writer.
//
//   auto writer = summary::create_file_writer("logs/run1");
//   for (int64_t step = 0; step < 100; ++step) writer->scalar("loss", loss, step);
//   writer->flush();            // now on disk; `tensorboard --logdir logs` shows the curve
//
// The file is "<logdir>/events.out.tfevents.<unix seconds, 10 digits>.<hostname>.<pid>.<n><suffix>"
// (n counts the writers this process has opened), the name TensorFlow gives it; its first record
// is the file_version event "brain.Event:2". Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "framework/summary/event.h"
#include "framework/summary/record_writer.h"

namespace strata::summary {

// tf.summary.create_file_writer's arguments, with its defaults.
struct SummaryWriterOptions {
  int max_queue_ = 10;             // flush once more than this many events wait in memory
  int64_t flush_millis_ = 120000;  // flush at the first write this long after the last flush
  std::string filename_suffix_ = ".v2";

  SummaryWriterOptions& max_queue(int v) { max_queue_ = v; return *this; }
  SummaryWriterOptions& flush_millis(int64_t v) { flush_millis_ = v; return *this; }
  SummaryWriterOptions& filename_suffix(std::string v) { filename_suffix_ = std::move(v); return *this; }
};

class SummaryWriter {
 public:
  // Creates `logdir` (with its parents) and a new event file in it. IOError naming the directory
  // when either cannot be created; ValueError for max_queue or flush_millis < 0.
  explicit SummaryWriter(std::string logdir, SummaryWriterOptions options = {});
  // Closes the file; errors are dropped here (call close() to see them).
  ~SummaryWriter();
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  // tf.summary.scalar(tag, value, step): one point of the curve `tag`.
  void scalar(const std::string& tag, double value, int64_t step);
  // Any event (several scalars at once, a custom wall_time); wall_time 0 means now.
  void write(Event event);
  // Hands every written event to the operating system: it survives the process being killed.
  void flush();
  // Flushes and closes the file; later writes are a StateError, later closes do nothing.
  void close();

  const std::string& logdir() const { return logdir_; }
  // The event file's path.
  const std::string& path() const { return path_; }

 private:
  void write_locked(const Event& event);

  std::string logdir_;
  SummaryWriterOptions options_;
  std::string path_;
  std::mutex mu_;
  std::unique_ptr<TFRecordWriter> file_;
  int pending_ = 0;  // events written since the last flush
  std::chrono::steady_clock::time_point last_flush_;
};

// tf.summary.create_file_writer(logdir, ...).
std::shared_ptr<SummaryWriter> create_file_writer(const std::string& logdir,
                                                  SummaryWriterOptions options = {});

}  // namespace strata::summary

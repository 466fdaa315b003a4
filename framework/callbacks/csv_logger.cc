#include "framework/callbacks/csv_logger.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "framework/callbacks/filepath_format.h"
#include "framework/callbacks/worker_files.h"
#include "framework/core/error.h"

namespace strata {

CSVLogger::CSVLogger(std::string filename, std::string separator, bool append)
    : filename_(std::move(filename)),
      separator_(separator.empty() ? ',' : separator[0]),
      append_(append) {
  if (separator.size() != 1) {
    throw ValueError("CSVLogger: separator must be a 1-character string, got \"" + separator +
                     "\"");
  }
}

void CSVLogger::on_train_begin(const Logs&) {
  if (file_.is_open()) file_.close();
  // A worker other than the chief logs to a temporary file of its own, removed at the end.
  const std::string path = write_filepath(filename_, model(), WorkerFiles::kCheckpoints);
  std::error_code ec;
  if (path != filename_) std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  // Python's readline() is empty only for an empty file: that is when a header still belongs.
  write_header_ = !append_ || !std::filesystem::exists(path, ec) ||
                  std::filesystem::file_size(path, ec) == 0;
  // Binary, so that "\r\n" reaches the file as written.
  file_.open(path, std::ios::binary | (append_ ? std::ios::app : std::ios::trunc));
  if (!file_) {
    throw IOError("CSVLogger: cannot open \"" + path +
                  "\" for writing: " + std::strerror(errno));
  }
  // Columns are fixed per fit() (Keras 3 resets them too, so a reused logger follows new logs).
  keys_.reset();
}

std::string CSVLogger::field(const std::string& text) const {
  if (text.find_first_of(std::string(1, separator_) + "\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void CSVLogger::write_line(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i)
    line += (i ? std::string(1, separator_) : "") + field(fields[i]);
  file_ << line << "\r\n";
  file_.flush();
  if (!file_)
    throw IOError("CSVLogger: cannot write to \"" + filename_ + "\": " + std::strerror(errno));
}

void CSVLogger::on_epoch_end(int epoch, const Logs& logs) {
  if (!file_.is_open()) {
    throw StateError("CSVLogger: on_epoch_end before on_train_begin; the file \"" + filename_ +
                     "\" is not open");
  }
  if (!keys_) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : logs.items()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());  // byte order = Python's code-point order for UTF-8
    const bool has_val = std::any_of(keys.begin(), keys.end(),
                                     [](const std::string& k) { return k.rfind("val_", 0) == 0; });
    if (!has_val) {
      const size_t n = keys.size();
      for (size_t i = 0; i < n; ++i) keys.push_back("val_" + keys[i]);
    }
    keys_ = std::move(keys);
    if (write_header_) {
      std::vector<std::string> header{"epoch"};
      header.insert(header.end(), keys_->begin(), keys_->end());
      write_line(header);
    }
  }
  std::vector<std::string> row{std::to_string(epoch)};
  for (const std::string& k : *keys_) {
    const std::optional<double> v = logs.get(k);
    row.push_back(v ? python_float_repr(*v) : "NA");
  }
  write_line(row);
}

void CSVLogger::on_train_end(const Logs&) {
  if (file_.is_open()) file_.close();
  remove_worker_temp_file(filename_, model(), WorkerFiles::kCheckpoints);
}

}  // namespace strata

#include "framework/summary/event_file_reader.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <filesystem>
#include <system_error>

#include "framework/summary/record_reader.h"

namespace strata::summary {
namespace {

// Compares runs of digits by value, so "....7.9.v2" sorts before "....7.10.v2" (the writer
// counter) and names sort by creation time, then pid, then counter.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      // Without leading zeros, the longer run is the larger number.
      std::string_view na(a.data() + i, ei - i), nb(b.data() + j, ej - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

std::vector<Event> read_events(const std::string& path) {
  TFRecordReader reader(path);
  std::vector<Event> events;
  while (auto record = reader.read()) events.push_back(decode_event(*record));
  return events;
}

std::vector<std::string> list_event_files(const std::string& logdir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(logdir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("events.out.tfevents.", 0) == 0 && it->is_regular_file(ec)) {
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end(), natural_less);
  return files;
}

}  // namespace strata::summary

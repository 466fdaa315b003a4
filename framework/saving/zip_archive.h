// Zip archives through libzip (the container of Keras 3's .keras files): read entries into
// memory, write a new archive of stored (uncompressed) entries.
//
//   zip::Reader r = zip::Reader::open("m.keras");
//   if (r.contains("config.json")) std::string json = r.read("config.json");
//   zip::write_archive(temp_path, {{"metadata.json", meta}, {"config.json", config}});
//
// Internal to framework/saving/: <zip.h> stays in the .cc. Messages name the archive and the
// entry; an archive that cannot be read is a ValueError, a file that cannot be opened or
// written an IOError.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace strata::saving::zip {

class Reader {
 public:
  // IOError when `path` cannot be opened; ValueError (with libzip's reason) when it is not a
  // readable zip archive (truncated, corrupt, no central directory).
  static Reader open(const std::string& path);

  const std::string& path() const;
  // Entry names in archive order.
  const std::vector<std::string>& names() const;
  bool contains(const std::string& name) const;
  // The uncompressed bytes of `name`. ValueError naming the archive and the entry when it is
  // missing, fails its CRC check, or declares a size far beyond what it stores (Keras' guard
  // against decompression bombs).
  std::string read(const std::string& name) const;

 private:
  struct State;
  explicit Reader(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

struct Entry {
  std::string name;
  std::string bytes;
};

// Creates (or overwrites) the archive `path` holding `entries` in order, each stored without
// compression, as Keras' zipfile.ZipFile(f, "w") writes .keras files. IOError on failure.
void write_archive(const std::string& path, const std::vector<Entry>& entries);

}  // namespace strata::saving::zip

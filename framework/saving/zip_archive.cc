#include "framework/saving/zip_archive.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "framework/core/error.h"

namespace strata::saving::zip {
namespace {

std::string libzip_error(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string message = zip_error_strerror(&error);
  zip_error_fini(&error);
  return message;
}

// Keras' _reject_zip_bomb: a member over 4 GiB that expands more than 100 times its stored size.
constexpr zip_uint64_t kBombFloorBytes = zip_uint64_t(1) << 32;
constexpr zip_uint64_t kBombMaxExpansion = 100;

}  // namespace

struct Reader::State {
  std::string path;
  zip_t* archive = nullptr;
  std::vector<std::string> names;
  std::mutex mutex;  // one libzip archive is not safe for concurrent reads

  ~State() {
    if (archive != nullptr) zip_discard(archive);  // read-only: nothing to write back
  }
};

Reader::Reader(std::shared_ptr<State> state) : state_(std::move(state)) {}

Reader Reader::open(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || ::access(path.c_str(), R_OK) != 0) {
    const int err = errno;
    throw IOError("Loading: cannot open '" + path + "': " + std::strerror(err));
  }
  int code = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY, &code);
  if (archive == nullptr) {
    // A zip's directory of entries sits at its end: without it the file was cut short.
    const std::string what = code == ZIP_ER_NOZIP
                                 ? "its central directory (the end of a zip file) is missing: "
                                   "the file is truncated, e.g. by an interrupted copy"
                                 : libzip_error(code) + ": the archive is corrupt";
    throw ValueError("Loading: '" + path + "' starts like a zip archive (a .keras file) but "
                     "cannot be read as one: " + what + "; save or copy the model again");
  }
  auto state = std::make_shared<State>();
  state->path = path;
  state->archive = archive;
  const zip_int64_t count = zip_get_num_entries(archive, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* name = zip_get_name(archive, zip_uint64_t(i), ZIP_FL_ENC_GUESS);
    if (name != nullptr) state->names.emplace_back(name);
  }
  return Reader(std::move(state));
}

const std::string& Reader::path() const { return state_->path; }

const std::vector<std::string>& Reader::names() const { return state_->names; }

bool Reader::contains(const std::string& name) const {
  return std::find(state_->names.begin(), state_->names.end(), name) != state_->names.end();
}

std::string Reader::read(const std::string& name) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  const std::string where = "'" + name + "' in '" + state_->path + "'";
  zip_stat_t st;
  zip_stat_init(&st);
  if (!contains(name) || zip_stat(state_->archive, name.c_str(), 0, &st) != 0 ||
      !(st.valid & ZIP_STAT_SIZE)) {
    throw ValueError("Loading: the archive has no entry " + where);
  }
  if ((st.valid & ZIP_STAT_COMP_SIZE) && st.size > kBombFloorBytes &&
      st.size / kBombMaxExpansion > st.comp_size) {
    throw ValueError("Loading: entry " + where + " declares " + std::to_string(st.size) +
                     " bytes but stores only " + std::to_string(st.comp_size) +
                     "; refusing to read a potential decompression bomb");
  }
  zip_file_t* file = zip_fopen(state_->archive, name.c_str(), 0);
  if (file == nullptr) {
    throw ValueError("Loading: cannot open entry " + where + ": " +
                     zip_strerror(state_->archive) + " (the archive is corrupt)");
  }
  std::string bytes(size_t(st.size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const zip_int64_t n = zip_fread(file, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      const std::string reason = n < 0 ? zip_file_strerror(file) : "unexpected end of data";
      zip_fclose(file);
      throw ValueError("Loading: cannot read entry " + where + ": " + reason +
                       " (the archive is truncated or corrupt)");
    }
    done += size_t(n);
  }
  // libzip checks the entry's CRC when a read reaches its end: one more read must find it.
  char extra = 0;
  if (zip_fread(file, &extra, 1) != 0) {
    const std::string reason = zip_file_strerror(file);
    zip_fclose(file);
    throw ValueError("Loading: entry " + where + " is corrupt: " + reason +
                     " (its bytes do not match the checksum the archive records); save or copy "
                     "the model again");
  }
  const int closed = zip_fclose(file);
  if (closed != 0) {
    throw ValueError("Loading: entry " + where + " is corrupt: " + libzip_error(closed));
  }
  return bytes;
}

void write_archive(const std::string& path, const std::vector<Entry>& entries) {
  int code = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  if (archive == nullptr) {
    throw IOError("Saving: cannot create the zip archive '" + path + "': " + libzip_error(code));
  }
  auto fail = [&](const std::string& what) {
    const std::string reason = zip_strerror(archive);
    zip_discard(archive);
    throw IOError("Saving: cannot " + what + " '" + path + "': " + reason +
                  "; check that the disk has space and the directory is writable");
  };
  for (const Entry& e : entries) {
    // The buffers stay alive (in `entries`) until zip_close has written them.
    zip_source_t* source = zip_source_buffer(archive, e.bytes.data(), e.bytes.size(), 0);
    if (source == nullptr) fail("add '" + e.name + "' to");
    const zip_int64_t index = zip_file_add(archive, e.name.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(source);
      fail("add '" + e.name + "' to");
    }
    if (zip_set_file_compression(archive, zip_uint64_t(index), ZIP_CM_STORE, 0) != 0) {
      fail("store '" + e.name + "' in");
    }
  }
  if (zip_close(archive) != 0) fail("write");
}

}  // namespace strata::saving::zip

#include "framework/saving/file_format.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

#include "framework/core/error.h"
#include "framework/saving/file_checksum.h"

namespace strata::saving {
namespace {

namespace fs = std::filesystem;

const std::string kHdf5Signature("\x89HDF\r\n\x1a\n", 8);

// HDF5 looks for its superblock at 0, 512, 1024, 2048, ... (files with a user block).
bool has_hdf5_signature(std::ifstream& in, uint64_t size) {
  for (uint64_t offset = 0; offset + kHdf5Signature.size() <= size;
       offset = offset == 0 ? 512 : offset * 2) {
    std::string head(kHdf5Signature.size(), '\0');
    in.clear();
    in.seekg(std::streamoff(offset));
    if (!in.read(head.data(), std::streamsize(head.size()))) return false;
    if (head == kHdf5Signature) return true;
  }
  return false;
}

bool is_data_shard(const std::string& name) {
  static const std::regex shard(R"(.*\.data-\d{5}-of-\d{5}$)");
  return std::regex_match(name, shard);
}

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

bool directory_holds_checkpoint(const fs::path& dir) {
  std::error_code ec;
  if (path_exists(dir / "checkpoint")) return true;
  // increment(ec): the range-for's ++ would throw filesystem_error on an unreadable entry.
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (is_data_shard(name) || it->path().extension() == ".index") return true;
  }
  return false;
}

FileFormat detect_directory(const fs::path& dir) {
  if (path_exists(dir / "saved_model.pb") || path_exists(dir / "saved_model.pbtxt")) {
    return FileFormat::kSavedModel;
  }
  if (path_exists(dir / "config.json")) return FileFormat::kKerasDirectory;
  if (directory_holds_checkpoint(dir)) return FileFormat::kTfCheckpoint;
  return FileFormat::kDirectory;
}

}  // namespace

FileFormat detect_file_format(const std::string& path) {
  const fs::path p(path);
  std::error_code ec;
  const std::string name = p.filename().string();
  if (!fs::exists(p, ec)) {
    // tf.train.Checkpoint paths are prefixes: "ckpt-1" names "ckpt-1.index" and its shards.
    if (path_exists(path + ".index")) return FileFormat::kTfCheckpoint;
    throw IOError("Loading: cannot open '" + path + "': " + std::strerror(ENOENT) +
                  " (check the path; save the model there first)");
  }
  if (fs::is_directory(p, ec)) return detect_directory(p);
  if (name == "saved_model.pb") return FileFormat::kSavedModel;
  if (name == "checkpoint" || p.extension() == ".index" || is_data_shard(name)) {
    return FileFormat::kTfCheckpoint;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw IOError("Loading: cannot read '" + path + "': " + std::strerror(err));
  }
  const uint64_t size = fs::file_size(p, ec);
  std::string head(4, '\0');
  if (size >= 4 && in.read(head.data(), 4)) {
    if (head == std::string("PK\x03\x04", 4) || head == std::string("PK\x05\x06", 4)) {
      return FileFormat::kZip;
    }
  }
  // A file Strata wrote starts with its checksum header (file_checksum.h): HDF5 whatever the
  // rest says, so that damage to the HDF5 signature is reported by the checksum check.
  std::string start(kChecksumHeaderSize, '\0');
  in.clear();
  in.seekg(0);
  in.read(start.data(), std::streamsize(start.size()));
  if (has_checksum_header(std::string_view(start.data(), size_t(in.gcount())))) {
    return FileFormat::kHdf5;
  }
  return has_hdf5_signature(in, ec ? 0 : size) ? FileFormat::kHdf5 : FileFormat::kUnknown;
}

std::string describe(FileFormat format) {
  switch (format) {
    case FileFormat::kHdf5: return "an HDF5 file";
    case FileFormat::kZip: return "a zip archive";
    case FileFormat::kKerasDirectory: return "a Keras 3 model directory (config.json)";
    case FileFormat::kSavedModel: return "a TensorFlow SavedModel (saved_model.pb)";
    case FileFormat::kTfCheckpoint:
      return "a TensorFlow checkpoint (.index / .data-00000-of-00001 files)";
    case FileFormat::kDirectory: return "a directory";
    case FileFormat::kUnknown: break;
  }
  return "a file of an unknown format";
}

void throw_unsupported_format(const std::string& operation, const std::string& path,
                              FileFormat format) {
  const std::string what = operation + "('" + path + "'): ";
  switch (format) {
    case FileFormat::kSavedModel:
      throw ValueError(what + "this is a TensorFlow SavedModel (saved_model.pb), which Strata "
                       "cannot read: it holds TensorFlow graphs, not a Keras file. In "
                       "TensorFlow/Keras, load it and save it again with model.save('m.keras') "
                       "or model.save('m.h5'), then load that file");
    case FileFormat::kTfCheckpoint:
      throw ValueError(what + "this is a TensorFlow checkpoint (tf.train.Checkpoint or "
                       "save_weights in TensorFlow's format: <prefix>.index + "
                       "<prefix>.data-00000-of-00001), which Strata cannot read: it stores "
                       "variables by object graph, not in a Keras layout. In TensorFlow, restore "
                       "it into the model and save with model.save_weights('w.weights.h5') or "
                       "model.save('m.keras')");
    case FileFormat::kDirectory:
      throw IOError(what + "this is a directory, expected a .keras, .h5 or .weights.h5 file; "
                    "pass the path of the file itself");
    case FileFormat::kKerasDirectory:
      throw ValueError(what + "this is a Keras 3 model directory (saved with zipped=False); "
                       "load it with load_model() instead");
    case FileFormat::kZip:
      throw ValueError(what + "this is a zip archive; only load_model() and load_weights() "
                       "read .keras archives");
    case FileFormat::kHdf5:
      throw ValueError(what + "this is an HDF5 file, which this operation does not read");
    case FileFormat::kUnknown:
      break;
  }
  throw ValueError(what + "not a valid HDF5/Keras file: it starts with neither the HDF5 "
                   "signature (\\x89HDF: Keras' .h5 and .weights.h5) nor a zip header (PK: "
                   "Keras 3's .keras); load a file written by save()/save_weights() or by Keras");
}

}  // namespace strata::saving

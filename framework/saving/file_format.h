// What kind of model or weights file a path holds, read from its first bytes (HDF5's and zip's
// signatures) and its surroundings rather than trusted from its extension, and the error for
// the kinds Strata cannot read, saying which format it is and what to do instead.
//
//   switch (saving::detect_file_format(path)) {
//     case FileFormat::kHdf5: ...            // Keras 2 .h5, Keras 3 .weights.h5 / legacy .h5
//     case FileFormat::kZip: ...             // a .keras archive (or some other zip)
//     case FileFormat::kKerasDirectory: ...  // Keras 3's save(zipped=False) folder
//     default: saving::throw_unsupported_format("load_model", path, format);
//   }
#pragma once

#include <string>

namespace strata::saving {

enum class FileFormat {
  kHdf5,            // starts with "\x89HDF\r\n\x1a\n" (at 0 or a power-of-two user block), or
                    // with the checksum header of the files Strata writes (file_checksum.h)
  kZip,             // starts with "PK\x03\x04" (or "PK\x05\x06": an empty archive)
  kKerasDirectory,  // a directory holding config.json (Keras 3's unzipped model)
  kSavedModel,      // TensorFlow's SavedModel: a directory with saved_model.pb, or that file
  kTfCheckpoint,    // TensorFlow's checkpoint: <prefix>.index + <prefix>.data-00000-of-00001,
                    // the "checkpoint" state file, or a directory of them
  kDirectory,       // any other directory
  kUnknown,         // a file that is none of the above (empty, text, random bytes)
};

// A path that does not exist is an IOError naming it (unless it is a TF checkpoint prefix).
FileFormat detect_file_format(const std::string& path);

// The format's name for messages: "an HDF5 file", "a TensorFlow SavedModel directory", ...
std::string describe(FileFormat format);

// ValueError (IOError for a plain directory) saying that `operation` ("load_model",
// "load_weights") cannot read `path` because it is `format`, and how to convert it.
[[noreturn]] void throw_unsupported_format(const std::string& operation, const std::string& path,
                                           FileFormat format);

}  // namespace strata::saving

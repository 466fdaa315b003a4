// Keras 3's .keras format (keras/src/saving/saving_lib.py): a zip archive, every entry stored
// uncompressed, holding
//
//   metadata.json      {"keras_version": "3.10.0", "date_saved": "2025-01-31@12:00:00"}
//   config.json        serialize_keras_object(model): architecture, build and compile configs
//                      (keras3_model_config.h)
//   model.weights.h5   Keras 3's weights layout (keras3_weights_format.h) plus the optimizer's
//                      variables under optimizer/vars (keras3_optimizer_format.h)
//   assets/...         files some layers save (vocabularies); none of Strata's layers need them
//
// Keras 3 can also save the same files into a directory (save_model(zipped=False)); such a
// directory is read too.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "framework/config/json.h"
#include "framework/saving/hdf5_file.h"

namespace strata {
class Model;
}

namespace strata::saving {

inline constexpr const char* kArchiveConfig = "config.json";
inline constexpr const char* kArchiveMetadata = "metadata.json";
inline constexpr const char* kArchiveWeights = "model.weights.h5";
inline constexpr const char* kArchiveNpzWeights = "model.weights.npz";
// The Keras version whose layout Strata writes (metadata.json's keras_version).
inline constexpr const char* kKeras3Version = "3.10.0";

// True when `path` ends in ".keras".
bool is_keras_archive_path(const std::string& path);

// model.save("m.keras"): the archive above, written atomically (atomic_file.h).
void save_keras_archive(const Model& model, const std::string& path);

// JSON the way Python's json.dumps writes it (", " and ": " separators), as in Keras' files.
std::string python_json(const Json& value);

// An open .keras archive (or Keras 3 model directory).
class KerasArchive {
 public:
  // IOError when `path` cannot be opened; ValueError when it is not a readable zip archive.
  static KerasArchive open(const std::string& path);

  const std::string& path() const;
  std::vector<std::string> names() const;
  bool contains(const std::string& name) const;
  std::string read(const std::string& name) const;

  // config.json, parsed. ValueError naming the archive when it has none (a zip archive that is
  // not a Keras model) or it is not valid JSON.
  Json config() const;
  // model.weights.h5, opened in memory (messages name it "<archive>/model.weights.h5").
  // ValueError when the archive has none (or only Keras' npz weights).
  hdf5::File weights() const;

 private:
  struct Source;
  explicit KerasArchive(std::shared_ptr<const Source> source);
  std::shared_ptr<const Source> source_;
};

}  // namespace strata::saving

#include "framework/saving/keras_archive.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/optimizers/optimizer.h"
#include "framework/saving/atomic_file.h"
#include "framework/saving/keras3_model_config.h"
#include "framework/saving/keras3_optimizer_format.h"
#include "framework/saving/keras3_weights_format.h"
#include "framework/saving/zip_archive.h"

namespace strata::saving {
namespace {

namespace fs = std::filesystem;

void append_python_json(const Json& v, std::string& out) {
  if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const std::string& key : v.keys()) {
      out += first ? "" : ", ";
      first = false;
      out += Json(key).dump() + ": ";
      append_python_json(v.at(key), out);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      out += i == 0 ? "" : ", ";
      append_python_json(v.at(i), out);
    }
    out += ']';
  } else {
    out += v.dump();
  }
}

// datetime.now().strftime("%Y-%m-%d@%H:%M:%S"), as metadata.json's date_saved.
std::string now_string() {
  const std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d@%H:%M:%S", &local);
  return buf;
}

// The weights file of `model` (and its optimizer's state), as the bytes of an HDF5 file.
std::string weights_image(const Model& model, const std::string& path) {
  hdf5::File file = hdf5::File::create_in_memory(path + "/" + kArchiveWeights);
  {
    hdf5::Group root = file.root();
    write_keras3_weights(root, model);
    if (model.compiled()) {
      write_keras3_optimizer(root, *model.optimizer(), keras3_trainable_variables(model));
    }
  }
  std::string bytes = file.image();
  file.close();
  return bytes;
}

}  // namespace

bool is_keras_archive_path(const std::string& path) {
  const std::string suffix = ".keras";
  return path.size() >= suffix.size() &&
         path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string python_json(const Json& value) {
  std::string out;
  append_python_json(value, out);
  return out;
}

void save_keras_archive(const Model& model, const std::string& path) {
  const std::string config = python_json(keras3_model_config(model));
  const std::string metadata = python_json(
      Json::object({{"keras_version", kKeras3Version}, {"date_saved", now_string()}}));
  const std::string weights = weights_image(model, path);
  // saving_lib writes metadata.json, config.json, then the weights, all ZIP_STORED.
  write_file_atomically(path, [&](const std::string& temp) {
    zip::write_archive(temp, {{kArchiveMetadata, metadata},
                              {kArchiveConfig, config},
                              {kArchiveWeights, weights}});
  });
}

// Where the archive's files come from: a zip, or a directory (Keras' zipped=False).
struct KerasArchive::Source {
  std::string path;
  std::shared_ptr<zip::Reader> zip;  // null: a directory

  std::vector<std::string> names() const {
    if (zip) return zip->names();
    std::vector<std::string> out;
    std::error_code ec;
    // error_code overloads throughout: a filesystem_error must not escape as a non-strata error.
    fs::recursive_directory_iterator it(path, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code entry_ec;
      if (!it->is_regular_file(entry_ec)) continue;
      const fs::path relative = fs::relative(it->path(), path, entry_ec);
      if (!entry_ec) out.push_back(relative.generic_string());
    }
    if (ec) {
      throw IOError("Loading: cannot list the Keras model directory '" + path + "': " +
                    ec.message());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  bool contains(const std::string& name) const {
    if (zip) return zip->contains(name);
    std::error_code ec;
    return fs::is_regular_file(fs::path(path) / name, ec);
  }

  std::string read(const std::string& name) const {
    if (zip) return zip->read(name);
    const fs::path file = fs::path(path) / name;
    std::ifstream in(file, std::ios::binary);
    if (!in) throw IOError("Loading: cannot read '" + file.string() + "'");
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
  }
};

KerasArchive::KerasArchive(std::shared_ptr<const Source> source) : source_(std::move(source)) {}

KerasArchive KerasArchive::open(const std::string& path) {
  auto source = std::make_shared<Source>();
  source->path = path;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) source->zip = std::make_shared<zip::Reader>(zip::Reader::open(path));
  return KerasArchive(std::move(source));
}

const std::string& KerasArchive::path() const { return source_->path; }
std::vector<std::string> KerasArchive::names() const { return source_->names(); }
bool KerasArchive::contains(const std::string& name) const { return source_->contains(name); }
std::string KerasArchive::read(const std::string& name) const { return source_->read(name); }

namespace {

std::string listing(const std::vector<std::string>& names) {
  if (names.empty()) return "it is empty";
  std::string out;
  const size_t shown = std::min<size_t>(names.size(), 8);
  for (size_t i = 0; i < shown; ++i) out += (i == 0 ? "" : ", ") + names[i];
  if (shown < names.size()) out += ", ... (" + std::to_string(names.size()) + " entries)";
  return "it holds " + out;
}

}  // namespace

Json KerasArchive::config() const {
  if (!contains(kArchiveConfig)) {
    throw ValueError("Loading: '" + path() + "' is a zip archive but not a Keras model archive: "
                     "it has no config.json (" + listing(names()) + "); pass a .keras file "
                     "written by save() or by Keras 3");
  }
  try {
    return Json::parse(read(kArchiveConfig));
  } catch (const ValueError& e) {
    throw ValueError("Loading: config.json in '" + path() + "' is not valid JSON (" + e.what() +
                     "); the archive is corrupt, save the model again");
  }
}

hdf5::File KerasArchive::weights() const {
  if (!contains(kArchiveWeights)) {
    if (contains(kArchiveNpzWeights)) {
      throw ValueError("Loading: '" + path() + "' stores its weights as model.weights.npz "
                       "(Keras' save_model(weights_format=\"npz\")), which Strata does not read; "
                       "save it with the default weights_format=\"h5\"");
    }
    throw ValueError("Loading: '" + path() + "' has no model.weights.h5 (" + listing(names()) +
                     "): not a complete Keras model archive; save the model again");
  }
  return hdf5::File::open_image(read(kArchiveWeights), path() + "/" + kArchiveWeights);
}

}  // namespace strata::saving

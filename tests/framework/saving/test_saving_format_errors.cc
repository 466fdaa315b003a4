// Files Strata cannot load say what they are and what to do: TensorFlow SavedModels and
// checkpoints, zip archives that are not Keras archives, archives cut short or corrupt, files of
// no known format; errors rebuilding a model name the file; load_weights(by_name=true) that
// matches no layer warns.
#include <gtest/gtest.h>

#include <filesystem>

#include <strata/strata.h>

#include "layers/load_model.h"
#include "support/test_helpers.h"
#include "tests/framework/saving/keras_archive_test_util.h"

namespace strata {
namespace {

namespace h5 = testing::h5;
namespace k3 = testing::keras3;
using testing::expect_error;

std::shared_ptr<Sequential> small_model() {
  auto m = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(2)});
  m->build({-1, 3});
  return m;
}

// Both loaders refuse `path` with a ValueError holding every one of `parts`.
void expect_refused(const std::string& path, std::initializer_list<std::string_view> parts) {
  auto model = small_model();
  expect_error<ValueError>([&] { load_model(path); }, parts);
  expect_error<ValueError>([&] { model->load_weights(path); }, parts);
}

TEST(SavingFormatErrors, TensorFlowSavedModel) {
  const auto dir = h5::temp_dir("savedmodel");
  const auto saved = dir / "exported";
  std::filesystem::create_directories(saved / "variables");
  k3::write_bytes((saved / "saved_model.pb").string(), std::string("\x08\x01\x12\x04", 4));
  k3::write_bytes((saved / "variables" / "variables.index").string(), "index");
  for (const std::string path : {saved.string(), (saved / "saved_model.pb").string()}) {
    SCOPED_TRACE(path);
    expect_refused(path, {path, "TensorFlow SavedModel", "saved_model.pb", "model.save('m.keras')"});
  }
}

TEST(SavingFormatErrors, TensorFlowCheckpoint) {
  const auto dir = h5::temp_dir("tfckpt");
  const std::string prefix = (dir / "ckpt-3").string();
  k3::write_bytes(prefix + ".index", "sstable");
  k3::write_bytes(prefix + ".data-00000-of-00001", "tensor bytes");
  k3::write_bytes((dir / "checkpoint").string(), "model_checkpoint_path: \"ckpt-3\"\n");
  for (const std::string path : {prefix, prefix + ".index", prefix + ".data-00000-of-00001",
                                 (dir / "checkpoint").string(), dir.string()}) {
    SCOPED_TRACE(path);
    expect_refused(path, {path, "TensorFlow checkpoint", ".index", "save_weights('w.weights.h5')"});
  }
}

TEST(SavingFormatErrors, ZipArchiveThatIsNotAKerasArchive) {
  const auto dir = h5::temp_dir("notkeras");
  const std::string path = (dir / "photos.keras").string();
  k3::write_zip(path, {{"a.txt", "hello"}, {"b/c.bin", "xyz"}}, /*deflate=*/true);
  auto model = small_model();
  expect_error<ValueError>([&] { load_model(path); },
                           {path, "not a Keras model archive", "config.json", "a.txt", "b/c.bin"});
  expect_error<ValueError>([&] { model->load_weights(path); }, {path, "model.weights.h5", "a.txt"});
  // A config but no weights, or Keras' npz weights.
  const std::string no_weights = (dir / "config_only.keras").string();
  k3::write_zip(no_weights, {{"config.json", small_model()->to_json()}});
  expect_error<ValueError>([&] { load_model(no_weights); }, {no_weights, "no model.weights.h5"});
  const std::string npz = (dir / "npz.keras").string();
  k3::write_zip(npz, {{"config.json", small_model()->to_json()}, {"model.weights.npz", "PK.."}});
  expect_error<ValueError>([&] { load_model(npz); }, {npz, "model.weights.npz", "weights_format"});
  const std::string bad_json = (dir / "bad_json.keras").string();
  k3::write_zip(bad_json, {{"config.json", "{\"class_name\": "}, {"model.weights.h5", ""}});
  expect_error<ValueError>([&] { load_model(bad_json); }, {bad_json, "config.json", "not valid JSON"});
}

TEST(SavingFormatErrors, TruncatedAndCorruptArchives) {
  const auto dir = h5::temp_dir("badzip");
  auto model = small_model();
  model->compile("adam", "mse");
  const std::string whole = (dir / "whole.keras").string();
  model->save(whole);
  const std::string bytes = k3::file_bytes(whole);

  const std::string truncated = (dir / "truncated.keras").string();
  k3::write_bytes(truncated, bytes.substr(0, bytes.size() / 2));
  expect_refused(truncated, {truncated, "zip archive", "central directory", "truncated"});

  // One byte of the stored model.weights.h5 flipped: its CRC no longer matches.
  std::string flipped = bytes;
  const size_t at = bytes.find("HDF\r\n");
  ASSERT_NE(at, std::string::npos);
  flipped[at + 200] = char(flipped[at + 200] ^ 0x5a);
  const std::string corrupt = (dir / "corrupt.keras").string();
  k3::write_bytes(corrupt, flipped);
  expect_refused(corrupt, {corrupt, "model.weights.h5", "CRC"});
}

TEST(SavingFormatErrors, FilesOfNoKnownFormat) {
  const auto dir = h5::temp_dir("unknown");
  const std::string text = (dir / "notes.keras").string();
  k3::write_bytes(text, "this is not a model\n");
  expect_refused(text, {text, "not a valid HDF5/Keras file", "zip"});
  const std::string folder = (dir / "empty_folder").string();
  std::filesystem::create_directories(folder);
  auto model = small_model();
  expect_error<IOError>([&] { load_model(folder); }, {folder, "directory"});
  expect_error<IOError>([&] { load_model((dir / "missing.keras").string()); }, {"missing.keras", "No such file"});
}

// A layer class the registry lacks: the error names the class and the file it came from, for
// .keras and .h5 files alike.
TEST(SavingFormatErrors, UnknownLayerClassNamesTheFile) {
  const auto dir = h5::temp_dir("unknownclass");
  auto model = small_model();
  const std::string keras = (dir / "lambda.keras").string();
  model->save(keras);
  std::string config = k3::zip_entry(keras, "config.json");
  const size_t at = config.find("\"class_name\": \"Dense\"");
  ASSERT_NE(at, std::string::npos);
  config.replace(at, 21, "\"class_name\": \"Lambda\"");
  const std::string edited = (dir / "edited.keras").string();
  k3::write_zip(edited, {{"config.json", config}, {"model.weights.h5", k3::zip_entry(keras, "model.weights.h5")}});
  expect_error<ValueError>([&] { load_model(edited); }, {"load_model('" + edited + "')", "Lambda"});

  const std::string h5_path = (dir / "lambda.h5").string();
  model->save(h5_path);
  {
    h5::Id f(h5::open_for_editing(h5_path));
    ASSERT_GE(H5Adelete(f, "model_config"), 0);
    std::string json = model->to_json();
    json.replace(json.find("\"Dense\""), 7, "\"Lambda\"");
    h5::write_vlen_strings(f, "model_config", {json}, H5T_CSET_UTF8, true);
  }
  expect_error<ValueError>([&] { load_model(h5_path); }, {"load_model('" + h5_path + "')", "Lambda"});
}

// load_weights(by_name=true) with a file none of whose layers the model has: Keras loads
// nothing silently; Strata warns, naming both sides.
TEST(SavingFormatErrors, ByNameMatchingNoLayerWarns) {
  const auto dir = h5::temp_dir("byname");
  auto source = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(2, DenseOptions().name("file_dense"))});
  source->build({-1, 3});
  const std::string path = (dir / "w.h5").string();
  source->save_weights(path);
  auto target = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(2, DenseOptions().name("model_dense"))});
  target->build({-1, 3});
  const std::vector<float> before = target->weights()[0]->read_value().to_vector<float>();
  ::testing::internal::CaptureStderr();
  target->load_weights(path, /*by_name=*/true);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("WARNING: "), std::string::npos) << err;
  for (const char* part : {"by_name=true", "file_dense", "model_dense", path.c_str(), "no weights were loaded"}) {
    EXPECT_NE(err.find(part), std::string::npos) << err << " lacks " << part;
  }
  EXPECT_EQ(target->weights()[0]->read_value().to_vector<float>(), before);

  // One matching layer: no warning.
  ::testing::internal::CaptureStderr();
  source->load_weights(path, /*by_name=*/true);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace strata

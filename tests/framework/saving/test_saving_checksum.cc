// The checksum header of the files Strata writes (framework/saving/file_checksum.h) and what the
// files hold since: no variable-length strings anywhere, any size of model_config.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <strata/strata.h>

#include "framework/saving/file_checksum.h"
#include "framework/saving/training_checkpoint.h"
#include "layers/load_model.h"
#include "support/test_helpers.h"
#include "tests/framework/saving/h5_test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
namespace h5 = testing::h5;
using testing::expect_error;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Every attribute below `file`'s root whose type is a variable-length string, as "path@name".
std::vector<std::string> variable_length_attributes(hid_t file) {
  struct Walk {
    std::vector<std::string> found;
    std::string object;
  } walk;
  const auto check_attributes = [](hid_t obj, const char* name, const H5O_info_t*,
                                   void* data) -> herr_t {
    auto* w = static_cast<Walk*>(data);
    w->object = name;
    h5::Id o(H5Oopen(obj, name, H5P_DEFAULT));
    H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_INC, nullptr,
                [](hid_t loc, const char* attr, const H5A_info_t*, void* d) -> herr_t {
                  auto* w = static_cast<Walk*>(d);
                  h5::Id a(H5Aopen(loc, attr, H5P_DEFAULT));
                  h5::Id t(H5Aget_type(a));
                  if (H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0) {
                    w->found.push_back(w->object + "@" + attr);
                  }
                  return 0;
                },
                data);
    return 0;
  };
  H5Ovisit(file, H5_INDEX_NAME, H5_ITER_INC, check_attributes, &walk);
  return walk.found;
}

TEST(SavingChecksum, EveryStrataFileStartsWithItsChecksum) {
  auto model = h5::adam_trained_model();
  const fs::path dir = h5::temp_dir("checksum_files");
  const std::string full = (dir / "m.h5").string();
  const std::string keras2 = (dir / "w.h5").string();
  const std::string keras3 = (dir / "w.weights.h5").string();
  const std::string backup = (dir / "backup.h5").string();
  model->save(full);
  model->save_weights(keras2);
  model->save_weights(keras3);
  saving::write_training_checkpoint(*model, backup, R"({"epoch": 1})");
  for (const std::string& path : {full, keras2, keras3, backup}) {
    SCOPED_TRACE(path);
    const std::string bytes = read_all(path);
    EXPECT_EQ(bytes.substr(0, 24), "strata-checksum 1\ncrc32 ");
    EXPECT_TRUE(saving::has_checksum_header(bytes));
    EXPECT_TRUE(saving::verify_checksum(path));
    // An ordinary HDF5 file behind its 512-byte user block: HDF5 (and h5py, Keras) open it.
    EXPECT_EQ(bytes.substr(saving::kChecksumHeaderSize, 4), "\x89HDF");
    h5::Id f(h5::open_file(path));
    ASSERT_TRUE(f.ok());
    h5::Id fcpl(H5Fget_create_plist(f));
    hsize_t userblock = 0;
    H5Pget_userblock(fcpl, &userblock);
    EXPECT_EQ(userblock, saving::kChecksumHeaderSize);
    // No variable-length strings: their reading crashed libhdf5 on damaged files.
    EXPECT_EQ(variable_length_attributes(f), std::vector<std::string>{});
  }
}

TEST(SavingChecksum, DamageIsAValueErrorNamingTheFile) {
  auto model = h5::adam_trained_model();
  const fs::path dir = h5::temp_dir("checksum_damage");
  const std::string path = (dir / "w.h5").string();
  model->save_weights(path);
  const std::string pristine = read_all(path);

  // One weight value changed: HDF5 itself would load the wrong number without a word.
  std::string bytes = pristine;
  {
    h5::Id f(h5::open_file(path));
    const std::string layer = model->layers()[0]->name();
    h5::Id ds(H5Dopen2(f, (layer + "/" + layer + "/kernel:0").c_str(), H5P_DEFAULT));
    const haddr_t offset = H5Dget_offset(ds);
    ASSERT_NE(offset, HADDR_UNDEF);
    bytes[offset + 2] = char(bytes[offset + 2] ^ 0x01);
  }
  write_all(path, bytes);
  expect_error<ValueError>([&] { model->load_weights(path); },
                           {path, "damaged", "checksum does not match"});
  expect_error<ValueError>([&] { load_model(path); }, {path, "checksum does not match"});

  write_all(path, pristine.substr(0, pristine.size() - 1));
  expect_error<ValueError>([&] { model->load_weights(path); }, {path, "truncated"});
  write_all(path, pristine + "x");
  expect_error<ValueError>([&] { model->load_weights(path); }, {path, "extended"});
  bytes = pristine;
  bytes[saving::kChecksumHeaderSize - 1] = 'x';  // the header's padding
  write_all(path, bytes);
  expect_error<ValueError>([&] { model->load_weights(path); }, {path, "checksum header"});
  bytes = pristine;
  bytes[20] = 'g';  // "crc32 g..."
  write_all(path, bytes);
  expect_error<ValueError>([&] { model->load_weights(path); }, {path, "checksum header"});

  // The header's first line damaged: the file reads as one without a checksum, and is intact.
  bytes = pristine;
  bytes[0] = 'S';
  write_all(path, bytes);
  model->load_weights(path);
}

TEST(SavingChecksum, FilesWithoutChecksumLoadAsBefore) {
  auto model = h5::adam_trained_model();
  const fs::path dir = h5::temp_dir("checksum_none");
  const std::string path = (dir / "m.h5").string();
  model->save(path);
  std::string bytes = read_all(path);
  bytes.replace(0, saving::kChecksumHeaderSize, saving::kChecksumHeaderSize, '\0');
  write_all(path, bytes);
  EXPECT_FALSE(saving::verify_checksum(path));
  auto loaded = load_model(path);
  ASSERT_EQ(loaded->weights().size(), model->weights().size());
  for (size_t i = 0; i < model->weights().size(); ++i) {
    EXPECT_EQ(loaded->weights()[i]->read_value().to_vector<float>(),
              model->weights()[i]->read_value().to_vector<float>());
  }
}

// A model_config over HDF5's 64 KB object-header limit: a fixed-length attribute in the 1.8
// format's dense storage, where a variable-length string used to be needed.
TEST(SavingChecksum, LargeModelConfigIsAFixedLengthAttribute) {
  std::vector<std::shared_ptr<Layer>> layers{std::make_shared<Dense>(2)};
  for (int i = 0; i < 400; ++i) {
    std::string name = "activation_" + std::to_string(i) + "_";
    name.resize(120, 'x');
    layers.push_back(std::make_shared<ActivationLayer>("linear", name));
  }
  Sequential model(layers);
  model.build({-1, 3});
  const std::string path = (h5::temp_dir("checksum_large") / "m.h5").string();
  model.save(path);
  {
    h5::Id f(h5::open_file(path));
    const h5::AttrInfo info = h5::attr_info(f, "model_config");
    EXPECT_FALSE(info.variable_length);
    EXPECT_GT(info.size, 65536u);
  }
  auto loaded = load_model(path);
  EXPECT_EQ(loaded->layers().size(), layers.size());
}

}  // namespace
}  // namespace strata

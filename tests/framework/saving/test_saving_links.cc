// HDF5 soft and external links in weights files are refused, never followed: an external link
// would read another file (any file the process can open) as if it were the weights.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "support/test_helpers.h"
#include "tests/framework/saving/h5_test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
namespace h5 = testing::h5;
using testing::expect_error;

std::shared_ptr<Sequential> small_model() {
  set_random_seed(9);
  auto m = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(4), std::make_shared<Dense>(2)});
  m->build({-1, 3});
  return m;
}

std::vector<std::vector<float>> values_of(const Model& m) {
  std::vector<std::vector<float>> out;
  for (const auto& w : m.weights()) out.push_back(w->read_value().to_vector<float>());
  return out;
}

// Replaces the dataset at `path` of `file` with a link made by `link` (which gets the file id
// and the link's path).
template <typename MakeLink>
void replace_with_link(const std::string& file, const std::string& path, MakeLink link) {
  h5::Id f(h5::open_for_editing(file));
  ASSERT_TRUE(f.ok());
  ASSERT_GE(H5Ldelete(f, path.c_str(), H5P_DEFAULT), 0) << path;
  link(hid_t(f), path);
}

TEST(SavingLinks, ExternalLinkIntoAnotherFileIsRefused) {
  auto model = small_model();
  const fs::path dir = h5::temp_dir("links_external");
  // Another file holding a kernel of the right shape.
  const std::string other = (dir / "other.h5").string();
  {
    h5::Id f(h5::create_file(other));
    h5::write_floats(f, "stolen", std::vector<float>(12, 7.0f), {3, 4});
  }
  const std::string path = (dir / "w.h5").string();
  model->save_weights(path);
  const std::string layer = model->layers()[0]->name();
  const std::string kernel = layer + "/" + layer + "/kernel:0";
  replace_with_link(path, kernel, [&](hid_t f, const std::string& at) {
    ASSERT_GE(H5Lcreate_external(other.c_str(), "/stolen", f, at.c_str(), H5P_DEFAULT, H5P_DEFAULT), 0);
  });
  const auto before = values_of(*model);
  expect_error<ValueError>([&] { model->load_weights(path); },
                           {path, "/" + kernel, "external link", other + ":/stolen"});
  EXPECT_EQ(values_of(*model), before) << "nothing is assigned from a refused file";
}

TEST(SavingLinks, SoftLinksAreRefusedInEitherLayout) {
  auto model = small_model();
  const fs::path dir = h5::temp_dir("links_soft");
  const std::string layer = model->layers()[0]->name();
  // A Keras 2 layer group that is a soft link, and a Keras 3 variable that is one.
  const std::string keras2 = (dir / "w.h5").string();
  const std::string keras3 = (dir / "w.weights.h5").string();
  model->save_weights(keras2);
  model->save_weights(keras3);
  {
    h5::Id f(h5::open_for_editing(keras2));
    ASSERT_GE(H5Lmove(f, layer.c_str(), f, "elsewhere", H5P_DEFAULT, H5P_DEFAULT), 0);
    ASSERT_GE(H5Lcreate_soft("/elsewhere", f, layer.c_str(), H5P_DEFAULT, H5P_DEFAULT), 0);
  }
  expect_error<ValueError>([&] { model->load_weights(keras2); },
                           {keras2, "'/" + layer + "'", "soft link", "/elsewhere"});
  replace_with_link(keras3, "layers/dense/vars/0", [&](hid_t f, const std::string& at) {
    h5::write_floats(f, "copy", std::vector<float>(12, 1.0f), {3, 4});
    ASSERT_GE(H5Lcreate_soft("/copy", f, at.c_str(), H5P_DEFAULT, H5P_DEFAULT), 0);
  });
  expect_error<ValueError>([&] { model->load_weights(keras3); },
                           {keras3, "/layers/dense/vars/0", "soft link"});
}

}  // namespace
}  // namespace strata

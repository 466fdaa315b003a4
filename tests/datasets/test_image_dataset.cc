// image_dataset_from_directory on small PNG folders written here: labels, class names, label
// modes, shapes, the seeded split (disjoint and complementary), and bad arguments.
#include <algorithm>
#include <filesystem>
#include <set>

#include "datasets/image_dataset.h"
#include "datasets/image_io.h"
#include "framework/core/error.h"
#include "datasets/temp_dir.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using data::ImageDatasetOptions;
using testing::expect_error;
using testing::TempDir;

// <root>/<class>/img<i>.png, each image 6x4 RGB filled with a value identifying it:
// class k, image i -> 10 * k + i (so labels can be checked against pixels).
void write_folder(const std::filesystem::path& root, const std::vector<std::string>& classes,
                  int per_class) {
  for (size_t k = 0; k < classes.size(); ++k) {
    std::filesystem::create_directories(root / classes[k]);
    for (int i = 0; i < per_class; ++i) {
      const Tensor img = full({6, 4, 3}, double(10 * k + size_t(i)), uint8);
      data::write_png((root / classes[k] / ("img" + std::to_string(i) + ".png")).string(), img);
    }
  }
}

std::vector<data::Element> all_elements(const data::Dataset& ds) {
  std::vector<data::Element> out;
  auto it = ds.make_iterator();
  while (auto e = it->next()) out.push_back(*e);
  return out;
}

TEST(ImageDataset, InfersSortedClassesAndYieldsFloatBatches) {
  TempDir dir;
  write_folder(dir.path(), {"dogs", "cats"}, 3);
  std::filesystem::create_directories(dir.path() / ".hidden");
  testing::write_bytes(dir.file("cats/notes.txt"), {'x'});  // not an image: ignored
  const std::string root = dir.path().string();

  const auto index = data::index_image_directory(root, ImageDatasetOptions().shuffle(false));
  EXPECT_EQ(index.class_names, (std::vector<std::string>{"cats", "dogs"}));
  EXPECT_EQ(index.labels, (std::vector<int>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(std::filesystem::path(index.file_paths[3]).filename(), "img0.png");

  const auto ds = data::image_dataset_from_directory(
      root, ImageDatasetOptions().image_size(6, 4).batch_size(4).shuffle(false));
  const auto batches = all_elements(ds);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0][0].shape(), (Shape{4, 6, 4, 3}));
  EXPECT_EQ(batches[0][0].dtype(), float32);
  EXPECT_EQ(batches[0][1].dtype(), int32);
  EXPECT_EQ(batches[0][1].to_vector<int>(), (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(batches[1][0].shape(), (Shape{2, 6, 4, 3}));
  // "cats" = directory index 1 when written, so its pixels are 10 + i; dogs 0 + i.
  EXPECT_EQ(batches[0][0][1].to_vector<float>()[0], 11.f);
  EXPECT_EQ(batches[1][0][1].to_vector<float>()[5], 2.f);
}

TEST(ImageDataset, ResizesAndConvertsColor) {
  TempDir dir;
  write_folder(dir.path(), {"a", "b"}, 1);
  const auto ds = data::image_dataset_from_directory(
      dir.path().string(),
      ImageDatasetOptions().image_size(3, 5).color_mode("grayscale").batch_size(0));
  const auto elements = all_elements(ds);
  ASSERT_EQ(elements.size(), 2u);
  EXPECT_EQ(elements[0][0].shape(), (Shape{3, 5, 1}));  // unbatched
  EXPECT_EQ(elements[0][1].shape(), Shape{});
  // A constant image stays constant through bilinear resizing and grayscale conversion.
  const float v = elements[0][0].to_vector<float>()[0];
  for (float p : elements[0][0].to_vector<float>()) EXPECT_FLOAT_EQ(p, v);
  const auto rgba = all_elements(data::image_dataset_from_directory(
      dir.path().string(), ImageDatasetOptions().image_size(2, 2).color_mode("rgba")));
  EXPECT_EQ(rgba[0][0].shape(), (Shape{2, 2, 2, 4}));
  EXPECT_EQ(rgba[0][0].to_vector<float>()[3], 255.f);
}

TEST(ImageDataset, LabelModes) {
  TempDir dir;
  write_folder(dir.path(), {"a", "b", "c"}, 2);
  const std::string root = dir.path().string();
  auto opts = [] { return ImageDatasetOptions().image_size(2, 2).shuffle(false).batch_size(6); };

  const auto cat = all_elements(data::image_dataset_from_directory(root, opts().label_mode("categorical")));
  EXPECT_EQ(cat[0][1].shape(), (Shape{6, 3}));
  EXPECT_EQ(cat[0][1].dtype(), float32);
  EXPECT_EQ(cat[0][1][5].to_vector<float>(), (std::vector<float>{0, 0, 1}));

  const auto none = all_elements(data::image_dataset_from_directory(root, opts().label_mode("none")));
  EXPECT_EQ(none[0].size(), 1u);

  // class_names picks (and orders) the classes.
  const auto bin = all_elements(data::image_dataset_from_directory(
      root, opts().label_mode("binary").class_names({"c", "a"})));
  EXPECT_EQ(bin[0][1].shape(), (Shape{4, 1}));
  EXPECT_EQ(bin[0][1].to_vector<float>(), (std::vector<float>{0, 0, 1, 1}));
  EXPECT_EQ(bin[0][0][0].to_vector<float>()[0], 20.f);  // class "c" was written third

  expect_error<ValueError>([&] { data::image_dataset_from_directory(root, opts().label_mode("binary")); },
                           {"label_mode=\"binary\" needs exactly 2 classes", "found 3"});
  expect_error<ValueError>(
      [&] { data::image_dataset_from_directory(root, opts().class_names({"a", "zebra"})); },
      {"class_names [a, zebra]", "found [a, b, c]"});
}

TEST(ImageDataset, ExplicitLabelsFollowSortedPaths) {
  TempDir dir;
  write_folder(dir.path(), {"x", "y"}, 2);
  const std::string root = dir.path().string();
  const auto ds = data::image_dataset_from_directory(
      root, ImageDatasetOptions().labels(std::vector<int>{1, 0, 1, 1}).shuffle(false)
                .image_size(2, 2).batch_size(4));
  const auto b = all_elements(ds);
  EXPECT_EQ(b[0][1].to_vector<int>(), (std::vector<int>{1, 0, 1, 1}));
  EXPECT_EQ(data::index_image_directory(root, ImageDatasetOptions().labels(std::vector<int>{1, 0, 1, 1}))
                .class_names,
            (std::vector<std::string>{"0", "1"}));
  expect_error<ValueError>(
      [&] { data::index_image_directory(root, ImageDatasetOptions().labels(std::vector<int>{1})); },
      {"1 labels were given", "holds 4 image files"});
}

TEST(ImageDataset, SeededSplitIsDisjointAndComplementary) {
  TempDir dir;
  write_folder(dir.path(), {"a", "b"}, 5);
  const std::string root = dir.path().string();
  auto opts = [](const char* subset) {
    return ImageDatasetOptions().validation_split(0.3).subset(subset).seed(1337);
  };
  const auto train = data::index_image_directory(root, opts("training"));
  const auto val = data::index_image_directory(root, opts("validation"));
  EXPECT_EQ(train.file_paths.size(), 7u);
  EXPECT_EQ(val.file_paths.size(), 3u);
  std::set<std::string> all(train.file_paths.begin(), train.file_paths.end());
  all.insert(val.file_paths.begin(), val.file_paths.end());
  EXPECT_EQ(all.size(), 10u);
  // Same seed, same split; the shuffle broke up the class-by-class order.
  EXPECT_EQ(data::index_image_directory(root, opts("training")).file_paths, train.file_paths);
  EXPECT_NE(train.labels, (std::vector<int>{0, 0, 0, 0, 0, 1, 1}));

  // The dataset agrees with the index: every validation image's pixel value identifies its
  // file, and its label matches.
  const auto batches = all_elements(data::image_dataset_from_directory(
      root, opts("validation").image_size(6, 4).batch_size(8)));
  ASSERT_EQ(batches.size(), 1u);
  std::multiset<int> got, expected;
  for (int64_t i = 0; i < 3; ++i) {
    const int value = int(batches[0][0][i].to_vector<float>()[0]);
    EXPECT_EQ(value / 10, batches[0][1].to_vector<int>()[size_t(i)]);
    got.insert(value);
  }
  for (size_t i = 0; i < 3; ++i) {
    const std::string stem = std::filesystem::path(val.file_paths[i]).stem().string();
    expected.insert(10 * val.labels[i] + std::stoi(stem.substr(3)));
  }
  EXPECT_EQ(got, expected);
}

TEST(ImageDataset, BadArguments) {
  TempDir dir;
  write_folder(dir.path(), {"a"}, 1);
  const std::string root = dir.path().string();
  auto bad = [&](ImageDatasetOptions o, std::initializer_list<std::string_view> parts) {
    expect_error<ValueError>([&] { data::image_dataset_from_directory(root, o); }, parts);
  };
  bad(ImageDatasetOptions().validation_split(0.2).subset("training"), {"a seed is required"});
  bad(ImageDatasetOptions().validation_split(0.2), {"subset and validation_split must be set together"});
  bad(ImageDatasetOptions().validation_split(1.5).subset("training"), {"between 0 and 1"});
  bad(ImageDatasetOptions().validation_split(0.2).subset("both").seed(1), {"subset must be"});
  bad(ImageDatasetOptions().label_mode("sparse"), {"label_mode must be"});
  bad(ImageDatasetOptions().color_mode("cmyk"), {"color_mode must be"});
  bad(ImageDatasetOptions().interpolation("nearest"), {"\"nearest\" is not implemented"});
  bad(ImageDatasetOptions().image_size(0, 3), {"image_size must be positive"});
  bad(ImageDatasetOptions().labels("folders"), {"labels must be"});

  const std::string missing = (dir.path() / "nope").string();
  expect_error<IOError>([&] { data::image_dataset_from_directory(missing); }, {missing, "no such directory"});
  TempDir empty;
  testing::write_bytes(empty.file("top.png"), {1});  // top-level files carry no inferred label
  expect_error<ValueError>([&] { data::image_dataset_from_directory(empty.path().string()); },
                           {"no images found", empty.path().string(), ".png", "class subdirectories"});
}

// A link back up the tree made follow_links walk forever, its memory growing without bound.
TEST(ImageDataset, SymbolicLinkLoopIsAnErrorNamingTheLink) {
  TempDir dir;
  write_folder(dir.path(), {"a", "b"}, 1);
  const auto loop = dir.path() / "a" / "loop";
  std::filesystem::create_directory_symlink(dir.path(), loop);
  const std::string root = dir.path().string();
  for (const char* labels : {"inferred", "none"}) {
    SCOPED_TRACE(labels);
    expect_error<ValueError>(
        [&] {
          data::index_image_directory(root, ImageDatasetOptions().labels(labels).follow_links(true));
        },
        {"symbolic link loop: " + loop.string() + " -> " + root, "leads back to",
         "follow_links(false)"});
  }
  // Not followed, the link is harmless.
  EXPECT_EQ(data::index_image_directory(root, ImageDatasetOptions()).file_paths.size(), 2u);
  // Two links up: the walk used to branch twice per level (2^40 paths before the kernel's
  // ELOOP), which is the hang with memory growing without bound.
  std::filesystem::create_directory_symlink(dir.path(), dir.path() / "b" / "up");
  expect_error<ValueError>(
      [&] { data::index_image_directory(root, ImageDatasetOptions().follow_links(true)); },
      {"symbolic link loop"});
  std::filesystem::remove(dir.path() / "b" / "up");
  // A loop between two links, neither pointing at its own parent.
  std::filesystem::remove(loop);
  std::filesystem::create_directory_symlink(dir.path() / "b", dir.path() / "a" / "to_b");
  std::filesystem::create_directory_symlink(dir.path() / "a", dir.path() / "b" / "to_a");
  expect_error<ValueError>(
      [&] { data::index_image_directory(root, ImageDatasetOptions().follow_links(true)); },
      {"symbolic link loop", "to_a -> ", "to_b -> ", "leads back to"});
}

TEST(ImageDataset, FollowedLinksWithoutALoopAreRead) {
  TempDir dir;
  write_folder(dir.path() / "data", {"a"}, 2);
  write_folder(dir.path() / "extra", {"more"}, 3);
  std::filesystem::create_directory_symlink(dir.path() / "extra" / "more",
                                            dir.path() / "data" / "a" / "more");
  const std::string root = (dir.path() / "data").string();
  EXPECT_EQ(data::index_image_directory(root, ImageDatasetOptions()).file_paths.size(), 2u);
  EXPECT_EQ(data::index_image_directory(root, ImageDatasetOptions().follow_links(true))
                .file_paths.size(),
            5u);
}

// Keras passes explicit int labels through unchecked; Strata refuses one outside
// [0, number of distinct labels), which no loss could use.
TEST(ImageDataset, ExplicitLabelsOutOfRangeAreAValueErrorNamingThem) {
  TempDir dir;
  write_folder(dir.path(), {"a", "b"}, 2);
  const std::string root = dir.path().string();
  for (const char* mode : {"int", "categorical"}) {
    SCOPED_TRACE(mode);
    expect_error<ValueError>(
        [&] {
          data::image_dataset_from_directory(
              root, ImageDatasetOptions().labels(std::vector<int>{-1, 0, 1, 1}).label_mode(mode));
        },
        {"label -1", "out of range", "3 distinct labels", "[0, 3)"});
    expect_error<ValueError>(
        [&] {
          data::image_dataset_from_directory(
              root, ImageDatasetOptions().labels(std::vector<int>{0, 1000000000, 0, 1})
                        .label_mode(mode));
        },
        {"label 1000000000", "[0, 3)"});
  }
  // label_mode "none" ignores the labels, so nothing is checked.
  EXPECT_EQ(data::index_image_directory(root, ImageDatasetOptions()
                                                  .labels(std::vector<int>{-1, 0, 1, 1})
                                                  .label_mode("none"))
                .file_paths.size(),
            4u);
  // In range: fine.
  EXPECT_EQ(data::index_image_directory(
                root, ImageDatasetOptions().labels(std::vector<int>{2, 0, 1, 1}).shuffle(false))
                .labels,
            (std::vector<int>{2, 0, 1, 1}));
}

TEST(ImageDataset, MaxImagePixelsOption) {
  TempDir dir;
  write_folder(dir.path(), {"a"}, 1);  // 6x4 = 24 pixels
  const std::string root = dir.path().string();
  const auto small = data::image_dataset_from_directory(
      root, ImageDatasetOptions().image_size(2, 2).max_image_pixels(23));
  expect_error<ValueError>([&] { all_elements(small); },
                           {"24 pixels", "over the limit of 23", "max_image_pixels"});
  const auto enough = data::image_dataset_from_directory(
      root, ImageDatasetOptions().image_size(2, 2).max_image_pixels(24));
  EXPECT_EQ(all_elements(enough).size(), 1u);
  expect_error<ValueError>(
      [&] { data::image_dataset_from_directory(root, ImageDatasetOptions().max_image_pixels(-5)); },
      {"max_image_pixels must be >= 0", "-5"});
}

TEST(ImageDataset, UndecodableFileIsNamedWhenIterated) {
  TempDir dir;
  write_folder(dir.path(), {"a"}, 1);
  const std::string broken = dir.file("a/broken.png");
  testing::write_bytes(broken, {'n', 'o', 'p', 'e'});
  const auto ds = data::image_dataset_from_directory(
      dir.path().string(), ImageDatasetOptions().shuffle(false).image_size(2, 2));
  expect_error<ValueError>([&] { all_elements(ds); }, {"decode_image", broken, "cannot decode"});
}

}  // namespace
}  // namespace strata

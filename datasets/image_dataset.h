// keras.utils.image_dataset_from_directory: a Dataset of (image, label) batches from a folder
// of images, one subfolder per class:
//
//   main_directory/
//     class_a/ a_image_1.jpg, a_image_2.png, ...
//     class_b/ b_image_1.jpg, ...
//
//   auto train = data::image_dataset_from_directory(
//       "main_directory", data::ImageDatasetOptions().set_image_size(180, 180)
//                             .set_validation_split(0.2).set_subset("training").set_seed(123));
//
// Images are float32 [batch, height, width, channels] in [0, 255], resized with bilinear
// interpolation; labels follow label_mode. Files are decoded lazily, in parallel, as the
// dataset is iterated, so a huge folder costs only its list of paths up front.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framework/data/dataset.h"

namespace strata::data {

struct ImageDatasetOptions {
  // "inferred" (labels from the subfolder names, sorted alphabetically unless class_names
  // says otherwise) or "none" (images only; the whole tree is read). Overridden by
  // explicit_labels when that is set.
  std::string labels = "inferred";
  // One int label per image file, in the sorted order of the files' paths under the directory
  // (directories by path, then file names within each), as Keras' os.walk order.
  std::optional<std::vector<int>> explicit_labels;
  // "int" (int32 [N]), "categorical" (float32 one-hot [N, num_classes]), "binary" (float32
  // [N, 1], exactly two classes) or "none" (images only).
  std::string label_mode = "int";
  // With inferred labels: the subfolders to use, in label order (a subset is allowed).
  std::vector<std::string> class_names;
  std::string color_mode = "rgb";  // "rgb" (3 channels), "grayscale" (1) or "rgba" (4)
  int64_t batch_size = 32;         // 0: unbatched elements
  int image_height = 256;
  int image_width = 256;
  bool shuffle = true;
  // Seeds the file order shuffle and the per-epoch shuffle; unset draws one from the global
  // generator (set_random_seed). Required with validation_split and shuffle, so the two subsets
  // are complementary.
  std::optional<int64_t> seed;
  double validation_split = 0.0;  // fraction of the files kept for validation, in (0, 1)
  std::string subset;             // "training" or "validation" (with validation_split)
  std::string interpolation = "bilinear";  // the only one implemented
  bool follow_links = false;

  ImageDatasetOptions& set_labels(std::string v) { labels = std::move(v); return *this; }
  ImageDatasetOptions& set_labels(std::vector<int> v) { explicit_labels = std::move(v); return *this; }
  ImageDatasetOptions& set_label_mode(std::string v) { label_mode = std::move(v); return *this; }
  ImageDatasetOptions& set_class_names(std::vector<std::string> v) { class_names = std::move(v); return *this; }
  ImageDatasetOptions& set_color_mode(std::string v) { color_mode = std::move(v); return *this; }
  ImageDatasetOptions& set_batch_size(int64_t v) { batch_size = v; return *this; }
  ImageDatasetOptions& set_image_size(int height, int width) {
    image_height = height;
    image_width = width;
    return *this;
  }
  ImageDatasetOptions& set_shuffle(bool v) { shuffle = v; return *this; }
  ImageDatasetOptions& set_seed(int64_t v) { seed = v; return *this; }
  ImageDatasetOptions& set_validation_split(double v) { validation_split = v; return *this; }
  ImageDatasetOptions& set_subset(std::string v) { subset = std::move(v); return *this; }
  ImageDatasetOptions& set_interpolation(std::string v) { interpolation = std::move(v); return *this; }
  ImageDatasetOptions& set_follow_links(bool v) { follow_links = v; return *this; }
};

// The files image_dataset_from_directory would read, after shuffling and splitting: what Keras
// attaches to its dataset as file_paths and class_names.
struct ImageDirectoryIndex {
  std::vector<std::string> file_paths;
  std::vector<int> labels;               // empty when there are no labels
  std::vector<std::string> class_names;  // empty when there are no labels
};

// Validates the options and lists the files. ValueError for bad options, no images, or
// mismatched labels; IOError when the directory does not exist.
ImageDirectoryIndex index_image_directory(const std::string& directory,
                                          const ImageDatasetOptions& options = {});

Dataset image_dataset_from_directory(const std::string& directory,
                                     const ImageDatasetOptions& options = {});

}  // namespace strata::data

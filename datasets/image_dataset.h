// keras.utils.image_dataset_from_directory: a Dataset of (image, label) batches from a folder
// of images, one subfolder per class:
//
//   main_directory/
//     class_a/ a_image_1.jpg, a_image_2.png, ...
//     class_b/ b_image_1.jpg, ...
//
//   auto train = data::image_dataset_from_directory(
//       "main_directory", data::ImageDatasetOptions().image_size(180, 180)
//                             .validation_split(0.2).subset("training").seed(123));
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
  std::string labels_ = "inferred";
  // One int label per image file, in the sorted order of the files' paths under the directory
  // (directories by path, then file names within each), as Keras' os.walk order.
  std::optional<std::vector<int>> explicit_labels_;
  // "int" (int32 [N]), "categorical" (float32 one-hot [N, num_classes]), "binary" (float32
  // [N, 1], exactly two classes) or "none" (images only).
  std::string label_mode_ = "int";
  // With inferred labels: the subfolders to use, in label order (a subset is allowed).
  std::vector<std::string> class_names_;
  std::string color_mode_ = "rgb";  // "rgb" (3 channels), "grayscale" (1) or "rgba" (4)
  int64_t batch_size_ = 32;         // 0: unbatched elements
  int image_height_ = 256;
  int image_width_ = 256;
  bool shuffle_ = true;
  // Seeds the file order shuffle and the per-epoch shuffle_; unset draws one from the global
  // generator (set_random_seed). Required with validation_split and shuffle, so the two subsets
  // are complementary.
  std::optional<int64_t> seed_;
  double validation_split_ = 0.0;  // fraction of the files kept for validation, in (0, 1)
  std::string subset_;             // "training" or "validation" (with validation_split)
  std::string interpolation_ = "bilinear";  // the only one implemented
  // Walk into symbolic links to directories; a link back to a directory above it is a
  // ValueError naming the link (os.walk would recurse until paths grow too long).
  bool follow_links_ = false;
  // Images with more pixels are refused before decoding, as decompression bombs (see
  // data::kDefaultMaxImagePixels); unset: data::max_image_pixels() when the dataset is made;
  // 0: no limit.
  std::optional<int64_t> max_image_pixels_;

  ImageDatasetOptions& labels(std::string v) { labels_ = std::move(v); return *this; }
  ImageDatasetOptions& labels(std::vector<int> v) { explicit_labels_ = std::move(v); return *this; }
  ImageDatasetOptions& label_mode(std::string v) { label_mode_ = std::move(v); return *this; }
  ImageDatasetOptions& class_names(std::vector<std::string> v) { class_names_ = std::move(v); return *this; }
  ImageDatasetOptions& color_mode(std::string v) { color_mode_ = std::move(v); return *this; }
  ImageDatasetOptions& batch_size(int64_t v) { batch_size_ = v; return *this; }
  ImageDatasetOptions& image_size(int height, int width) {
    image_height_ = height;
    image_width_ = width;
    return *this;
  }
  ImageDatasetOptions& shuffle(bool v) { shuffle_ = v; return *this; }
  ImageDatasetOptions& seed(int64_t v) { seed_ = v; return *this; }
  ImageDatasetOptions& validation_split(double v) { validation_split_ = v; return *this; }
  ImageDatasetOptions& subset(std::string v) { subset_ = std::move(v); return *this; }
  ImageDatasetOptions& interpolation(std::string v) { interpolation_ = std::move(v); return *this; }
  ImageDatasetOptions& follow_links(bool v) { follow_links_ = v; return *this; }
  ImageDatasetOptions& max_image_pixels(int64_t v) { max_image_pixels_ = v; return *this; }
};

// The files image_dataset_from_directory would read, after shuffling and splitting: what Keras
// attaches to its dataset as file_paths and class_names.
struct ImageDirectoryIndex {
  std::vector<std::string> file_paths;
  std::vector<int> labels;               // empty when there are no labels
  std::vector<std::string> class_names;  // empty when there are no labels
};

// Validates the options and lists the files. ValueError for bad options, no images,
// mismatched or out-of-range explicit labels (each must be in [0, number of distinct labels)),
// or a symbolic link loop; IOError when the directory does not exist or cannot be listed.
ImageDirectoryIndex index_image_directory(const std::string& directory,
                                          const ImageDatasetOptions& options = {});

Dataset image_dataset_from_directory(const std::string& directory,
                                     const ImageDatasetOptions& options = {});

}  // namespace strata::data

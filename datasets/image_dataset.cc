// image_dataset_from_directory, following Keras' dataset_utils.index_directory and
// image_dataset_utils: list files in a fixed order, shuffle that list with the seed, split it,
// then build a lazy pipeline (indices -> shuffle -> parallel decode + resize -> batch).
#include "datasets/image_dataset.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include <sys/stat.h>

#include "datasets/image_io.h"
#include "framework/core/error.h"
#include "framework/core/random.h"
#include "framework/kernels_math/philox.h"
#include "framework/ops/shape_ops.h"

namespace strata::data {
namespace fs = std::filesystem;
namespace {

const char* kOp = "image_dataset_from_directory";
const std::vector<std::string> kFormats = {".bmp", ".gif", ".jpeg", ".jpg", ".png"};

bool is_image_file(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return std::find(kFormats.begin(), kFormats.end(), ext) != kFormats.end();
}

// A directory's identity: the same (device, inode) reached twice down one path is a loop.
struct DirId {
  dev_t device;
  ino_t inode;
  bool operator==(const DirId& o) const { return device == o.device && inode == o.inode; }
};

struct Ancestor {
  DirId id;
  fs::path path;
  bool is_link;  // reached through a symbolic link
};

// "a/loop -> /data": the symbolic links among `chain`, for the loop's message.
std::string describe_links(const std::vector<Ancestor>& chain) {
  std::string out;
  for (const Ancestor& a : chain) {
    if (!a.is_link) continue;
    std::error_code ec;
    const fs::path target = fs::read_symlink(a.path, ec);
    out += (out.empty() ? "" : ", ") + a.path.string() + (ec ? "" : " -> " + target.string());
  }
  return out;
}

// Collects the image files directly in `dir` into by_dir[dir], then walks its subdirectories
// (through symbolic links with follow_links). `ancestors` are the directories from the top of
// the walk down to `dir`: a subdirectory that is one of them again (a link to a parent) would
// make os.walk(followlinks=True) recurse until paths grow too long, so it is an error that
// names the link.
void walk(const fs::path& dir, bool follow_links, std::vector<Ancestor>& ancestors,
          std::map<std::string, std::vector<std::string>>& by_dir) {
  const std::string op = kOp;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) throw IOError(op + ": cannot list " + dir.string() + ": " + ec.message());
  std::vector<std::string>& files = by_dir[dir.string()];
  std::vector<fs::path> subdirs;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) throw IOError(op + ": cannot list " + dir.string() + ": " + ec.message());
    std::error_code entry_ec;
    // Both follow symbolic links, as os.walk's listing does; a dangling link is neither.
    if (it->is_regular_file(entry_ec)) {
      if (is_image_file(it->path())) files.push_back(it->path().filename().string());
    } else if (it->is_directory(entry_ec) && (follow_links || !it->is_symlink(entry_ec))) {
      subdirs.push_back(it->path());
    }
  }
  if (ec) throw IOError(op + ": cannot list " + dir.string() + ": " + ec.message());
  for (const fs::path& sub : subdirs) {
    struct stat st;
    if (::stat(sub.c_str(), &st) != 0) continue;  // gone since it was listed
    const DirId id{st.st_dev, st.st_ino};
    std::error_code link_ec;
    const bool is_link = fs::is_symlink(sub, link_ec);
    for (size_t i = 0; i < ancestors.size(); ++i) {
      if (ancestors[i].id == id) {
        // The links walked through since that directory are the loop.
        std::vector<Ancestor> chain(ancestors.begin() + long(i) + 1, ancestors.end());
        chain.push_back({id, sub, is_link});
        throw ValueError(op + ": symbolic link loop: " + describe_links(chain) +
                         " leads back to " + ancestors[i].path.string() + " (reached again as " +
                         sub.string() + "), so with follow_links=true the walk would never "
                         "end. Remove or fix the link, or pass follow_links(false)");
      }
    }
    ancestors.push_back({id, sub, is_link});
    walk(sub, follow_links, ancestors, by_dir);
    ancestors.pop_back();
  }
}

// Image files under `dir` in Keras' order: directories sorted by path (os.walk sorted by root),
// file names sorted within each directory.
std::vector<std::string> list_images(const fs::path& dir, bool follow_links) {
  std::map<std::string, std::vector<std::string>> by_dir;  // std::map keeps roots sorted
  std::vector<Ancestor> ancestors;
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) ancestors.push_back({{st.st_dev, st.st_ino}, dir, false});
  walk(dir, follow_links, ancestors, by_dir);
  std::vector<std::string> files;
  for (auto& [root, names] : by_dir) {
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) files.push_back((fs::path(root) / n).string());
  }
  return files;
}

std::vector<std::string> subdirectories(const fs::path& dir) {
  std::vector<std::string> subdirs;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code entry_ec;
    if (it->is_directory(entry_ec) && !name.empty() && name[0] != '.') subdirs.push_back(name);
  }
  if (ec) throw IOError(std::string(kOp) + ": cannot list " + dir.string() + ": " + ec.message());
  std::sort(subdirs.begin(), subdirs.end());
  return subdirs;
}

std::string join(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s + "]";
}

int channels_for(const std::string& color_mode) {
  if (color_mode == "rgb") return 3;
  if (color_mode == "grayscale") return 1;
  if (color_mode == "rgba") return 4;
  throw ValueError(std::string(kOp) + ": color_mode must be \"rgb\", \"grayscale\" or \"rgba\", "
                   "got \"" + color_mode + "\"");
}

void check_options(const ImageDatasetOptions& o) {
  const std::string op = kOp;
  if (!o.explicit_labels_ && o.labels_ != "inferred" && o.labels_ != "none") {
    throw ValueError(op + ": labels must be \"inferred\", \"none\" or a list of ints, got \"" +
                     o.labels_ + "\"");
  }
  if (o.explicit_labels_ && !o.class_names_.empty()) {
    throw ValueError(op + ": class_names can only be passed with labels=\"inferred\"");
  }
  if (o.label_mode_ != "int" && o.label_mode_ != "categorical" && o.label_mode_ != "binary" &&
      o.label_mode_ != "none") {
    throw ValueError(op + ": label_mode must be \"int\", \"categorical\", \"binary\" or \"none\", "
                     "got \"" + o.label_mode_ + "\"");
  }
  channels_for(o.color_mode_);
  if (o.interpolation_ != "bilinear") {
    throw ValueError(op + ": interpolation \"" + o.interpolation_ +
                     "\" is not implemented (only \"bilinear\")");
  }
  if (o.batch_size_ < 0) {
    throw ValueError(op + ": batch_size must be >= 0 (0 = no batching), got " +
                     std::to_string(o.batch_size_));
  }
  if (o.image_height_ <= 0 || o.image_width_ <= 0) {
    throw ValueError(op + ": image_size must be positive, got (" +
                     std::to_string(o.image_height_) + ", " + std::to_string(o.image_width_) + ")");
  }
  if (o.validation_split_ != 0.0 && !(o.validation_split_ > 0.0 && o.validation_split_ < 1.0)) {
    throw ValueError(op + ": validation_split must be between 0 and 1, got " +
                     std::to_string(o.validation_split_));
  }
  if ((o.validation_split_ != 0.0) != !o.subset_.empty()) {
    throw ValueError(op + ": subset and validation_split must be set together (got subset=\"" +
                     o.subset_ + "\", validation_split=" + std::to_string(o.validation_split_) + ")");
  }
  if (!o.subset_.empty() && o.subset_ != "training" && o.subset_ != "validation") {
    throw ValueError(op + ": subset must be \"training\" or \"validation\", got \"" + o.subset_ +
                     "\"");
  }
  if (o.max_image_pixels_ && *o.max_image_pixels_ < 0) {
    throw ValueError(op + ": max_image_pixels must be >= 0 (0: no limit), got " +
                     std::to_string(*o.max_image_pixels_));
  }
  if (o.validation_split_ != 0.0 && o.shuffle_ && !o.seed_) {
    throw ValueError(op + ": with validation_split and shuffle, a seed is required so the "
                     "training and validation subsets don't overlap");
  }
}

// Explicit labels index their classes, which are the distinct labels sorted (Keras'
// class_names): each must be in [0, num_classes). Keras passes int labels through unchecked and
// one-hot encodes an out-of-range one as all zeros; here a -1 or a 10^9 fails now, naming the
// label, rather than as an out-of-range class deep inside the loss (or silently).
void check_label_range(const std::vector<int>& labels, size_t num_classes) {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || size_t(labels[i]) >= num_classes) {
      throw ValueError(std::string(kOp) + ": label " + std::to_string(labels[i]) + " (of file " +
                       std::to_string(i) + " in sorted order) is out of range: with " +
                       std::to_string(num_classes) + " distinct labels, each must be in [0, " +
                       std::to_string(num_classes) + "). Number the classes 0.." +
                       std::to_string(num_classes - 1) + ", with no gaps");
    }
  }
}

// Keras draws an unseeded run's seed from NumPy's global generator; ours comes from Strata's,
// so set_random_seed makes it reproducible.
uint64_t draw_seed() {
  const GeneratorState s = reserve_random(1);
  uint32_t out[4];
  philox::block(s.offset, 0x5eed, s.seed, out);
  return (uint64_t(out[0]) << 32) | out[1];
}

// Fisher-Yates with a fully specified engine, so a seed gives the same order everywhere.
std::vector<size_t> permutation(size_t n, uint64_t seed) {
  std::vector<size_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = i;
  std::mt19937_64 rng(seed);
  for (size_t i = n; i > 1; --i) std::swap(p[i - 1], p[rng() % i]);
  return p;
}

}  // namespace

ImageDirectoryIndex index_image_directory(const std::string& directory,
                                          const ImageDatasetOptions& options) {
  check_options(options);
  const std::string op = kOp;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) {
    throw IOError(op + ": " + directory + ": no such directory");
  }
  // Like Keras: labels=None or label_mode=None both mean "images only".
  const bool no_labels =
      options.label_mode_ == "none" || (!options.explicit_labels_ && options.labels_ == "none");
  ImageDirectoryIndex index;
  if (!options.explicit_labels_ && options.labels_ == "inferred") {
    std::vector<std::string> classes = subdirectories(directory);
    if (!options.class_names_.empty()) {
      for (const std::string& c : options.class_names_) {
        if (std::find(classes.begin(), classes.end(), c) == classes.end()) {
          throw ValueError(op + ": class_names " + join(options.class_names_) +
                           " must name subdirectories of " + directory + "; found " +
                           join(classes));
        }
      }
      classes = options.class_names_;
    }
    for (size_t k = 0; k < classes.size(); ++k) {
      for (std::string& f : list_images(fs::path(directory) / classes[k], options.follow_links_)) {
        index.file_paths.push_back(std::move(f));
        index.labels.push_back(int(k));
      }
    }
    index.class_names = classes;
  } else {
    index.file_paths = list_images(directory, options.follow_links_);
    if (options.explicit_labels_) {
      index.labels = *options.explicit_labels_;
      if (index.labels.size() != index.file_paths.size()) {
        throw ValueError(op + ": " + std::to_string(index.labels.size()) + " labels were given "
                         "but " + directory + " holds " + std::to_string(index.file_paths.size()) +
                         " image files");
      }
      for (int l : std::set<int>(index.labels.begin(), index.labels.end())) {
        index.class_names.push_back(std::to_string(l));
      }
    }
  }
  if (index.file_paths.empty()) {
    throw ValueError(op + ": no images found in " + directory + " (formats: " + join(kFormats) +
                     (options.labels_ == "inferred" && !options.explicit_labels_
                          ? "; with labels=\"inferred\" images must be in class subdirectories"
                          : "") + ")");
  }
  if (no_labels) {
    index.labels.clear();
    index.class_names.clear();
  }
  if (options.label_mode_ == "binary" && !no_labels && index.class_names.size() != 2) {
    throw ValueError(op + ": label_mode=\"binary\" needs exactly 2 classes, found " +
                     std::to_string(index.class_names.size()) + ": " + join(index.class_names));
  }
  if (options.explicit_labels_ && !no_labels) check_label_range(index.labels, index.class_names.size());

  if (options.shuffle_) {
    // Shuffle the whole list before splitting: erases the class-by-class order, and with the
    // same seed the training and validation subsets are complementary.
    const uint64_t seed = options.seed_ ? uint64_t(*options.seed_) : draw_seed();
    const std::vector<size_t> p = permutation(index.file_paths.size(), seed);
    ImageDirectoryIndex shuffled{{}, {}, index.class_names};
    for (size_t i : p) {
      shuffled.file_paths.push_back(index.file_paths[i]);
      if (!index.labels.empty()) shuffled.labels.push_back(index.labels[i]);
    }
    index = std::move(shuffled);
  }
  if (!options.subset_.empty()) {
    const size_t n = index.file_paths.size();
    const size_t num_val = size_t(options.validation_split_ * double(n));
    const size_t begin = options.subset_ == "training" ? 0 : n - num_val;
    const size_t end = options.subset_ == "training" ? n - num_val : n;
    index.file_paths = {index.file_paths.begin() + long(begin), index.file_paths.begin() + long(end)};
    if (!index.labels.empty()) {
      index.labels = {index.labels.begin() + long(begin), index.labels.begin() + long(end)};
    }
  }
  return index;
}

Dataset image_dataset_from_directory(const std::string& directory,
                                     const ImageDatasetOptions& options) {
  ImageDirectoryIndex index = index_image_directory(directory, options);
  const int64_t n = int64_t(index.file_paths.size());
  if (n == 0) {
    throw ValueError(std::string(kOp) + ": the " + options.subset_ + " subset of " + directory +
                     " is empty (validation_split=" + std::to_string(options.validation_split_) +
                     " of too few files)");
  }
  std::vector<int64_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ids[size_t(i)] = i;
  std::vector<Tensor> components = {Tensor::from_vector(ids)};
  if (!index.labels.empty()) {
    const Tensor labels = Tensor::from_vector(std::vector<int32_t>(index.labels.begin(), index.labels.end()));
    const int64_t num_classes = int64_t(index.class_names.size());
    if (options.label_mode_ == "int") components.push_back(labels);
    else if (options.label_mode_ == "categorical") components.push_back(one_hot(labels, num_classes));
    else components.push_back(reshape(cast(labels, float32), {n, 1}));  // binary
  }

  const auto paths = std::make_shared<const std::vector<std::string>>(std::move(index.file_paths));
  const int channels = channels_for(options.color_mode_);
  const int height = options.image_height_, width = options.image_width_;
  const int64_t max_pixels = options.max_image_pixels_.value_or(max_image_pixels());
  MapFn load = [paths, channels, height, width, max_pixels](const Element& e) {
    Element out = e;
    const std::string& path = (*paths)[size_t(e[0].item<int64_t>())];
    out[0] = resize_bilinear(decode_image(path, channels, max_pixels), height, width);
    return out;
  };

  Dataset ds = Dataset::from_tensor_slices(components);
  if (options.shuffle_) {
    // Keras reshuffles every epoch with a buffer of 8 batches; shuffling indices before the
    // decode keeps that buffer cheap.
    const int64_t buffer = options.batch_size_ > 0 ? options.batch_size_ * 8 : 1024;
    ds = ds.shuffle(buffer, options.seed_ ? *options.seed_ : -1);
  }
  ds = ds.map(load, kAutotune);
  if (options.batch_size_ > 0) ds = ds.batch(options.batch_size_);
  return ds.prefetch(2);
}

}  // namespace strata::data

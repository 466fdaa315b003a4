// Dataset::list_files: the files a glob pattern matches, as a source of path elements.
#include <glob.h>

#include <string>
#include <vector>

#include "framework/core/error.h"
#include "framework/data/bytes_tensor.h"
#include "framework/data/dataset_ops.h"

namespace strata::data {
namespace {

// The paths, sorted (glob sorts them), as a source; shuffling is the shuffle node's job.
class FilesDataset : public DatasetImpl {
 public:
  explicit FilesDataset(std::vector<std::string> paths) : paths_(std::move(paths)) {}
  std::unique_ptr<Iterator> make_iterator() const override {
    class Files : public Iterator {
     public:
      explicit Files(std::shared_ptr<const FilesDataset> ds) : ds_(std::move(ds)) {}
      std::optional<Element> next() override {
        if (index_ >= ds_->paths_.size()) return std::nullopt;
        return Element{bytes_tensor(ds_->paths_[index_++])};
      }
      int64_t skip(int64_t n) override {
        const size_t k = std::min(size_t(std::max<int64_t>(n, 0)), ds_->paths_.size() - index_);
        index_ += k;
        return int64_t(k);
      }

     private:
      std::shared_ptr<const FilesDataset> ds_;
      size_t index_ = 0;
    };
    return std::make_unique<Files>(self<FilesDataset>());
  }
  int64_t cardinality() const override { return int64_t(paths_.size()); }
  const std::vector<std::string>* source_files() const override { return &paths_; }
  ImplPtr with_files(std::vector<std::string> files) const override {
    return std::make_shared<FilesDataset>(std::move(files));
  }

 private:
  std::vector<std::string> paths_;
};

std::vector<std::string> matching_files(const std::string& pattern) {
  if (pattern.empty()) throw ValueError("Dataset::list_files: the pattern is empty");
  glob_t found{};
  const int rc = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &found);
  std::vector<std::string> paths;
  if (rc == 0) {
    for (size_t i = 0; i < found.gl_pathc; ++i) paths.emplace_back(found.gl_pathv[i]);
  }
  globfree(&found);
  if (rc == GLOB_NOMATCH || (rc == 0 && paths.empty())) {
    throw ValueError("Dataset::list_files: no files match the pattern '" + pattern +
                     "'; check the directory and the pattern (*, ? and [...] as in a shell)");
  }
  if (rc != 0) {
    throw IOError("Dataset::list_files: cannot list the files of '" + pattern +
                  "' (a directory on the way cannot be read)");
  }
  return paths;
}

}  // namespace

Dataset Dataset::list_files(const std::string& pattern, bool shuffle, int64_t seed) {
  std::vector<std::string> paths = matching_files(pattern);
  const int64_t n = int64_t(paths.size());
  Dataset files(std::make_shared<FilesDataset>(std::move(paths)));
  // A buffer of every file: a uniform permutation, reshuffled each pass as TensorFlow does.
  return shuffle ? files.shuffle(n, seed, /*reshuffle_each_iteration=*/true) : files;
}

}  // namespace strata::data

// Where a named data set's files live. The rule, in order:
//   1. the directory the caller passed (when non-empty, it is the only place looked: a typo in
//      an explicit path should fail loudly, not silently load another copy);
//   2. $STRATA_DATA_DIR/<name>;
//   3. ~/.strata/datasets/<name>  (where scripts/get_datasets puts them).
// When no candidate holds every required file, the IOError names every place looked and the
// command that fetches the data.
#pragma once

#include <string>
#include <vector>

namespace strata::data {

// One required file: its accepted names, in order of preference (e.g. "x" then "x.gz").
using FileAlternatives = std::vector<std::string>;

// The candidate directories for `name`, in lookup order (rule above).
std::vector<std::string> dataset_search_dirs(const std::string& name,
                                             const std::string& explicit_dir);

// The first candidate directory that holds every file in `required`. `subdirs` are tried inside
// each candidate, in order ("" = the candidate itself), so CIFAR-10 can accept both a folder
// holding cifar-10-batches-bin/ and that folder itself. Throws IOError otherwise.
std::string locate_dataset(const std::string& name, const std::string& explicit_dir,
                           const std::vector<FileAlternatives>& required,
                           const std::vector<std::string>& subdirs = {""});

// dir/<first existing alternative>, or "" when none exists.
std::string find_file(const std::string& dir, const FileAlternatives& names);

}  // namespace strata::data

// A fresh job token for the tasks strata-launch starts: 32 random bytes as 64 hex digits in a
// file only this user can read (0600), in a folder of its own (0700) under the temporary
// directory, both removed when the object goes (the launcher's exit).
#pragma once

#include <string>

namespace launch {

class JobTokenFile {
 public:
  // Makes the folder and the file. strata::IOError naming what failed.
  JobTokenFile();
  ~JobTokenFile();
  JobTokenFile(const JobTokenFile&) = delete;
  JobTokenFile& operator=(const JobTokenFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
};

// `bytes` random bytes from the kernel (getrandom). strata::IOError when it fails.
std::string random_bytes(size_t bytes);

}  // namespace launch

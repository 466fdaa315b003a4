// Atomic file replacement: a save killed at any moment (crash, SIGKILL, power loss) leaves
// either the previous file or the complete new one at the target path, never a partial file.
//
//   write_file_atomically("ckpt.h5", [&](const std::string& temp) { write_everything_to(temp); });
//
// `write` fills a fresh, uniquely named temporary file in the target's directory (the same file
// system, so the rename below is atomic) and must have closed it when it returns; then the
// temporary file is fsync'ed, renamed over the target, and the directory fsync'ed so that the
// rename itself is durable. When `write` throws, the temporary file is removed and the target is
// untouched. A process killed mid-write leaves at most a stray ".<name>.tmp-*" file beside it.
#pragma once

#include <functional>
#include <string>

namespace strata::saving {

void write_file_atomically(const std::string& path,
                           const std::function<void(const std::string& temp_path)>& write);

// The prefix of the temporary files made for `path` (".<file name>.tmp-" in its directory).
std::string temporary_prefix_for(const std::string& path);

}  // namespace strata::saving

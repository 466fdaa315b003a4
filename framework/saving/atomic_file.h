// Atomic file replacement: a save killed at any moment (crash, SIGKILL, power loss) leaves
// either the previous file or the complete new one at the target path, never a partial file.
//
//   write_file_atomically("ckpt.h5", [&](const std::string& temp) { write_everything_to(temp); });
//
// `write` fills a fresh, uniquely named temporary file in the target's directory (the same file
// system, so the rename below is atomic) and must have closed it when it returns; then the
// temporary file is fsync'ed, renamed over the target, and the directory fsync'ed so that the
// rename itself is durable. When `write` throws, the temporary file is removed and the target is
// untouched. A process killed mid-write leaves a stray ".<name>.tmp-<host>-<pid>-<n>.h5" file
// beside it, which the next save of the same target removes once it is clearly abandoned: its
// process (same host) is gone, or it has not been modified for a day.
//
// Errors are IOErrors naming the path and the fix: a missing directory, a directory path that
// is a file, a target that is a directory or not a regular file (a device such as /dev/null),
// a directory that is not writable, a full disk.
#pragma once

#include <functional>
#include <string>

namespace strata::saving {

// `before_rename`, when given, runs after the new file is complete and synced, just before it
// replaces the target (BackupAndRestore moves the current backup aside there); an exception from
// it abandons the save like one from `write`.
void write_file_atomically(const std::string& path,
                           const std::function<void(const std::string& temp_path)>& write,
                           const std::function<void()>& before_rename = {});

// The prefix of the temporary files made for `path` (".<file name>.tmp-" in its directory).
std::string temporary_prefix_for(const std::string& path);

// Removes the temporary files of earlier saves of `path` that are abandoned (see above); what
// cannot be removed stays. Returns how many were removed. write_file_atomically calls it.
int remove_stale_temporaries(const std::string& path);

}  // namespace strata::saving

// The HDF5 file driver Strata saves through: POSIX reads and writes as HDF5's default (sec2)
// driver does them, except that a failed write never reaches HDF5. The driver records the first
// error (its errno) and from then on drops every write, so HDF5 sees a file it can always flush
// and close; the saving code asks save_error() and throws the IOError itself.
//
// Why: libhdf5 1.10 cannot close a file whose flush fails (disk full, quota, file size limit,
// EIO). H5Fclose returns an error and leaves the file half-closed, and the library then
// segfaults at exit in H5_term_library (H5F__close_cb), after the save had already reported a
// clean error. With this driver the failed save's file closes normally and
// write_file_atomically deletes it.
//
// Internal to framework/saving/ (hdf5_file.cc); ids are carried as int64_t like there.
#pragma once

#include <cstdint>

namespace strata::saving::hdf5 {

// Where the driver reports: the errno of the first failed write (or truncation) of a file, 0
// while every write has succeeded. It must outlive the file (its last write is at H5Fclose).
struct SaveStatus {
  int error = 0;
};

// Sets the driver of the file-access property list `fapl`, reporting to `status`. False when it
// cannot (an HDF5 release with another driver interface): the file then uses HDF5's default
// driver and `status` stays 0.
bool use_save_driver(int64_t fapl, SaveStatus* status);

}  // namespace strata::saving::hdf5

// The checksum of the HDF5 files Strata writes, verified before HDF5 parses a byte of them.
//
// Every .h5 file Strata saves to disk (save, save_weights, BackupAndRestore's backups, and so
// ModelCheckpoint's files) starts with a 512-byte HDF5 user block: a region HDF5 reserves for
// the application and skips (the HDF5 superblock follows at offset 512, where HDF5, h5py and
// Keras find it, so the file stays an ordinary HDF5 file). Strata writes the checksum there, as
// text that `head -c 60 file.h5` shows:
//
//   strata-checksum 1\n
//   crc32 1a2b3c4d\n        zlib's CRC-32 of every byte after the 512-byte header
//   size 123456\n           how many bytes follow the header
//   (NUL padding to 512 bytes)
//
// Opening such a file checks both first: a file changed, truncated or extended after it was
// written is a ValueError naming it, and never reaches libhdf5 (which can crash on damaged
// metadata). A file without the header (written by Keras/h5py, or by an older Strata) is read
// as before. Any change of up to 32 consecutive bits after the header is caught (CRC-32's
// guarantee); a change inside the header breaks it (caught too) or its first line, and then the
// intact file reads as one without a checksum.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace strata::saving {

// The size of the header, which is the HDF5 user block of the files Strata writes.
inline constexpr size_t kChecksumHeaderSize = 512;

// Writes the header into the first kChecksumHeaderSize bytes of `path`, a closed HDF5 file
// created with a user block of that size. IOError when the file cannot be read or written.
void write_checksum(const std::string& path);

// Checks `path` against its header, when it has one (returns whether it had). ValueError naming
// the file when it does not match or the header itself is damaged; IOError when it cannot be
// read.
bool verify_checksum(const std::string& path);

// Whether `bytes`, the start of a file, begin like a checksum header.
bool has_checksum_header(std::string_view bytes);

}  // namespace strata::saving

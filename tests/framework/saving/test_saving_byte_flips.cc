// Hostile files: every single-byte change of the files Strata writes ends in a strata::Error (or
// in a load that works, when the byte was unused), never in a signal. Covered: a full model
// (save: load_model and load_weights), a Keras 2 weights file (save_weights: load_weights) and a
// BackupAndRestore backup (restored by the callback), each
//   - with the checksum header removed, as a file copied out of Strata's hands would be read:
//     HDF5 parses the damaged metadata. Every byte outside the raw weight values (which HDF5
//     copies without parsing) is changed (XOR 0xFF). Variable-length strings made libhdf5
//     1.10.8 crash here (H5HG_read, in about 1% of the changes);
//   - as written, with its checksum: every byte of the 512-byte header and every 61st byte
//     after it (the CRC catches any one-byte change there by construction) must be reported
//     as a checksum mismatch before HDF5 reads the file.
// The loop runs in a child process, so that a crash fails the test with the file and offset
// instead of killing the test binary.
//
// Also Keras' files as h5py 3 writes them: the same model and weights files with every string
// attribute rewritten as variable-length strings (no checksum), which libhdf5 1.10.8 read
// through its global heap and crashed on (dozens of offsets) or hung on; Strata now reads them
// itself (hdf5_vlen_strings.h). The weights file every byte, the model file every 3rd.
//
// About 44,000 loads, 15-20 s in Release on an idle core (load_weights of the full model file
// without checksum takes every other byte: load_model parsed the same metadata);
// STRATA_BYTE_FLIP_STRIDE=N changes only every Nth byte (sanitizer builds default to 4).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>

#include <strata/strata.h>

#include "framework/callbacks/backup_and_restore.h"
#include "framework/saving/file_checksum.h"
#include "layers/load_model.h"
#include "tests/framework/saving/child_process_util.h"
#include "tests/framework/saving/h5_test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
namespace h5 = testing::h5;

constexpr const char* kDirVariable = "STRATA_BYTE_FLIP_DIR";

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

// The byte ranges [begin, end) of the contiguous datasets' raw data: values HDF5 copies out
// without parsing them, so changing them tests nothing.
std::vector<std::pair<size_t, size_t>> raw_data_ranges(const std::string& path) {
  std::vector<std::pair<size_t, size_t>> ranges;
  h5::Id f(h5::open_file(path));
  H5Ovisit(f, H5_INDEX_NAME, H5_ITER_INC,
           [](hid_t root, const char* name, const H5O_info_t* info, void* data) -> herr_t {
             if (info->type != H5O_TYPE_DATASET) return 0;
             h5::Id ds(H5Dopen2(root, name, H5P_DEFAULT));
             const haddr_t offset = H5Dget_offset(ds);
             const hsize_t size = H5Dget_storage_size(ds);
             if (offset != HADDR_UNDEF && size > 0) {
               static_cast<std::vector<std::pair<size_t, size_t>>*>(data)->emplace_back(
                   size_t(offset), size_t(offset + size));
             }
             return 0;
           },
           &ranges);
  return ranges;
}

// What one child run checks: the pristine file, how it is loaded, and whether its checksum
// stays (then every change after the header must be reported as a checksum mismatch).
enum class Form {
  kAsWritten,        // with its checksum header
  kWithoutChecksum,  // the header zeroed: HDF5 parses the damage
  kH5py3Strings,     // no header, and every string variable-length, as h5py 3 writes them
};

struct FlipCase {
  std::string name;
  std::string pristine;
  Form form;
  std::function<void(const std::string& damaged)> load;
  size_t stride = 1;  // on top of STRATA_BYTE_FLIP_STRIDE
};

// The child: writes the files, then loads every damaged copy. Skipped in a normal run.
TEST(SavingByteFlips, Child) {
  const char* dir_env = std::getenv(kDirVariable);
  if (dir_env == nullptr) GTEST_SKIP() << "only run as the child of EveryChangeIsAnErrorNeverASignal";
  const fs::path dir(dir_env);
  set_random_seed(5);
  auto model = h5::adam_trained_model();
  const std::string model_h5 = (dir / "model.h5").string();
  const std::string weights_h5 = (dir / "weights.h5").string();
  model->save(model_h5);
  model->save_weights(weights_h5);
  // A backup as BackupAndRestore writes it: one epoch, kept at the end.
  const fs::path backup_dir = dir / "backup";
  {
    auto trained = h5::adam_trained_model();
    trained->fit(random_normal({16, 3}), random_normal({16, 2}),
                 FitOptions().epochs(1).batch_size(8).verbose(0).callbacks(
                     {std::make_shared<BackupAndRestore>(
                         backup_dir.string(), BackupAndRestoreOptions().delete_checkpoint(false))}));
  }
  const std::string backup_h5 = (dir / "backup.h5").string();
  fs::copy_file(backup_dir / "backup.h5", backup_h5);

  const fs::path restore_dir = dir / "restore";
  const auto load_model_of = [](const std::string& p) { load_model(p); };
  const auto load_weights_of = [&](const std::string& p) { model->load_weights(p); };
  const auto restore_from = [&](const std::string& p) {
    fs::remove_all(restore_dir);
    fs::create_directories(restore_dir);
    fs::copy_file(p, restore_dir / "backup.h5");
    BackupAndRestore callback(restore_dir.string());
    callback.set_model(model.get());
    callback.on_train_begin({});
  };
  std::vector<FlipCase> cases;
  for (Form form : {Form::kAsWritten, Form::kWithoutChecksum}) {
    const std::string tag = form == Form::kAsWritten ? "" : " (checksum removed)";
    cases.push_back({"model.h5 load_model" + tag, model_h5, form, load_model_of});
    // load_model has parsed this file's weights already: every other byte here.
    cases.push_back({"model.h5 load_weights" + tag, model_h5, form, load_weights_of,
                     form == Form::kAsWritten ? size_t(1) : size_t(2)});
    cases.push_back({"weights.h5 load_weights" + tag, weights_h5, form, load_weights_of});
    cases.push_back({"backup.h5 restore" + tag, backup_h5, form, restore_from});
  }
  // Keras' files as h5py 3 writes them (variable-length strings, read without libhdf5's
  // global-heap reader, which crashed and hung on these): the model file every 3rd byte.
  const std::string weights_h5py3 = (dir / "weights-h5py3.h5").string();
  const std::string model_h5py3 = (dir / "model-h5py3.h5").string();
  fs::copy_file(weights_h5, weights_h5py3);
  fs::copy_file(model_h5, model_h5py3);
  h5::rewrite_strings_as_variable_length(weights_h5py3);
  h5::rewrite_strings_as_variable_length(model_h5py3);
  cases.push_back({"weights.h5 as h5py 3 writes it, load_weights", weights_h5py3,
                   Form::kH5py3Strings, load_weights_of});
  cases.push_back({"model.h5 as h5py 3 writes it, load_model", model_h5py3, Form::kH5py3Strings,
                   load_model_of, 3});

  size_t stride = 1;
#if defined(__SANITIZE_ADDRESS__)
  stride = 4;
#endif
  if (const char* s = std::getenv("STRATA_BYTE_FLIP_STRIDE")) stride = size_t(std::max(1, std::atoi(s)));

  // The case and offset being tried, for the parent to report if this process dies: a fixed-size
  // record rewritten in place (no truncation, which is slow on some file systems).
  const std::string progress_path = (dir / "progress").string();
  const int progress = ::open(progress_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(progress, 0);
  const auto record = [&](const std::string& what) {
    std::string line = what;
    line.resize(120, ' ');
    ASSERT_EQ(::pwrite(progress, line.data(), line.size(), 0), ssize_t(line.size()));
  };
  // BackupAndRestore announces every successful restore on stdout.
  std::streambuf* cout_buffer = std::cout.rdbuf(nullptr);

  const auto start = std::chrono::steady_clock::now();
  size_t flips = 0;
  const std::string damaged = (dir / "damaged.h5").string();
  for (const FlipCase& c : cases) {
    const bool keep_checksum = c.form == Form::kAsWritten;
    std::string bytes = read_all(c.pristine);
    ASSERT_EQ(saving::has_checksum_header(bytes), c.form != Form::kH5py3Strings) << c.pristine;
    // Without its header the user block is plain zeros, which HDF5 skips as always.
    if (c.form == Form::kWithoutChecksum) {
      bytes.replace(0, saving::kChecksumHeaderSize, saving::kChecksumHeaderSize, '\0');
    }
    const auto raw = keep_checksum ? std::vector<std::pair<size_t, size_t>>{}
                                   : raw_data_ranges(c.pristine);
    int wrong_type = 0, missed_by_checksum = 0;
    for (size_t offset = 0; offset < bytes.size();) {
      const size_t next =
          keep_checksum && offset >= saving::kChecksumHeaderSize ? 61 : stride * c.stride;
      bool skip = !keep_checksum && offset < saving::kChecksumHeaderSize;  // zeros HDF5 skips
      for (const auto& [begin, end] : raw) skip = skip || (offset >= begin && offset < end);
      if (skip) {
        offset += next;
        continue;
      }
      record(c.name + " at offset " + std::to_string(offset));
      std::string copy = bytes;
      copy[offset] = char(copy[offset] ^ 0xFF);
      write_all(damaged, copy);
      ++flips;
      const bool after_header = keep_checksum && offset >= saving::kChecksumHeaderSize;
      try {
        c.load(damaged);
        if (after_header) ++missed_by_checksum;
      } catch (const Error& e) {
        const std::string what = e.what();
        if (after_header && what.find("checksum") == std::string::npos) {
          if (++missed_by_checksum <= 3) ADD_FAILURE() << c.name << " at offset " << offset << ": " << what;
        }
      } catch (const std::exception& e) {
        if (++wrong_type <= 5) {
          ADD_FAILURE() << c.name << " at offset " << offset
                        << ": an exception that is not a strata::Error: " << e.what();
        }
      }
      offset += next;
    }
    EXPECT_EQ(wrong_type, 0) << c.name;
    EXPECT_EQ(missed_by_checksum, 0) << c.name << ": changes the checksum did not report";
  }
  std::cout.rdbuf(cout_buffer);
  ::close(progress);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("byte flips: %zu loads of damaged files in %.1f s (stride %zu)\n", flips, seconds,
              stride);
  // Every HDF5 object opened on the way was closed again, on every error path.
  EXPECT_EQ(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
}

// A RAM-backed directory when there is one: the loop rewrites a file ~30,000 times.
fs::path work_dir() {
  std::error_code ec;
  if (fs::is_directory("/dev/shm", ec)) {
    const fs::path dir = fs::path("/dev/shm") / ("strata_byte_flips_" + std::to_string(::getpid()));
    fs::remove_all(dir, ec);
    if (fs::create_directories(dir, ec)) return dir;
  }
  return h5::temp_dir("byte_flips");
}

TEST(SavingByteFlips, EveryChangeIsAnErrorNeverASignal) {
  const fs::path dir = work_dir();
  const std::string log = (dir / "child.log").string();
  // One thread: the models are tiny, and idle OpenMP workers would only spin. No leak check in
  // the child under ASan: libhdf5 itself leaks a few hundred bytes on some damaged object
  // headers (H5O protect failures, not Strata's handles), which would end every sanitizer run.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string child_asan =
      "ASAN_OPTIONS=" + std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "detect_leaks=0";
  const int status = testing::run_test_in_child(
      "SavingByteFlips.Child",
      {std::string(kDirVariable) + "=" + dir.string(), "STRATA_NUM_THREADS=1",
       "OMP_WAIT_POLICY=PASSIVE", child_asan},
      log, /*timeout_s=*/450);  // a hang (libhdf5 looped forever on some damaged heaps) fails
  const std::string output = testing::tail_of(log);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the byte-flip child " << testing::describe_status(status) << " while loading "
      << read_all((dir / "progress").string()) << "\nits output:\n" << output;
  const size_t summary = output.find("byte flips:");
  ASSERT_NE(summary, std::string::npos) << output;
  std::printf("%s", output.substr(summary, output.find('\n', summary) - summary + 1).c_str());
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace strata

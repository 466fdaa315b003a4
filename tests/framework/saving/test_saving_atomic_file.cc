// write_file_atomically's housekeeping and errors: temporaries of killed saves are removed by
// the next save of the same target once clearly abandoned, and paths that cannot be written
// (a directory that is a file, /dev/null, a FIFO, a read-only file system) are IOErrors naming
// the path and the fix.
#include <gtest/gtest.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include <strata/strata.h>

#include "framework/callbacks/backup_and_restore.h"
#include "framework/saving/atomic_file.h"
#include "support/test_helpers.h"
#include "tests/framework/saving/h5_test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
namespace h5 = testing::h5;
using testing::expect_error;

std::shared_ptr<Sequential> small_model() {
  auto m = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(2)});
  m->build({-1, 3});
  return m;
}

void touch(const fs::path& p) { std::ofstream(p) << "partial"; }

// The "<host>-" part of this process's temporary file names, read off a real save.
std::string host_tag(const fs::path& dir) {
  std::string temp;
  saving::write_file_atomically((dir / "probe").string(), [&](const std::string& t) {
    temp = fs::path(t).filename().string();
    std::ofstream(t) << "x";
  });
  fs::remove(dir / "probe");
  const std::string prefix = ".probe.tmp-";
  const std::string rest = temp.substr(prefix.size());  // <host>-<pid>-<n>.h5
  const std::string pid_part = "-" + std::to_string(::getpid()) + "-";
  return rest.substr(0, rest.rfind(pid_part) + 1);
}

// The id of a process that has exited (and been reaped).
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

TEST(SavingAtomicTemporaries, NextSaveRemovesTheAbandonedOnes) {
  const fs::path dir = h5::temp_dir("stale_temps");
  const std::string host = host_tag(dir);
  const std::string dead = std::to_string(dead_pid());
  const std::string alive = std::to_string(::getpid());
  const fs::path killed = dir / (".w.h5.tmp-" + host + dead + "-0.h5");          // removed
  const fs::path in_flight = dir / (".w.h5.tmp-" + host + alive + "-7.h5");       // kept: live
  const fs::path other_host = dir / ".w.h5.tmp-otherhost-" ;
  const fs::path remote = fs::path(other_host.string() + dead + "-0.h5");          // kept
  const fs::path remote_old = fs::path(other_host.string() + dead + "-1.h5");      // removed: old
  const fs::path other_target = dir / (".x.h5.tmp-" + host + dead + "-0.h5");     // kept
  const fs::path unrelated = dir / "notes.txt";                                   // kept
  for (const fs::path& p : {killed, in_flight, remote, remote_old, other_target, unrelated}) touch(p);
  fs::last_write_time(remote_old, fs::file_time_type::clock::now() - std::chrono::hours(25));

  small_model()->save_weights((dir / "w.h5").string());
  EXPECT_FALSE(fs::exists(killed)) << "its process is gone";
  EXPECT_FALSE(fs::exists(remote_old)) << "untouched for more than a day";
  for (const fs::path& p : {in_flight, remote, other_target, unrelated}) {
    EXPECT_TRUE(fs::exists(p)) << p;
  }
  EXPECT_TRUE(fs::exists(dir / "w.h5"));
}

TEST(SavingAtomicTemporaries, UnwritablePathsAreIOErrors) {
  const fs::path dir = h5::temp_dir("unwritable");
  auto model = small_model();
  const fs::path file = dir / "plain_file";
  touch(file);
  // A "directory" that is a file, and /dev/null as one.
  for (const fs::path& p : {file / "w.h5", fs::path("/dev/null/w.h5")}) {
    expect_error<IOError>([&] { model->save_weights(p.string()); },
                          {p.string(), "is not a directory"});
  }
  // A target that is not a regular file: it is refused, not replaced.
  const fs::path fifo = dir / "fifo.h5";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  expect_error<IOError>([&] { model->save_weights(fifo.string()); },
                        {fifo.string(), "not a regular file"});
  EXPECT_TRUE(fs::is_fifo(fifo));

  // ModelCheckpoint and BackupAndRestore pointed at such paths.
  Tensor x = random_normal({8, 3}), y = random_normal({8, 2});
  model->compile("sgd", "mse");
  const auto fit_with = [&](CallbackPtr callback) {
    model->fit(x, y, FitOptions().epochs(1).batch_size(8).verbose(0).callbacks({callback}));
  };
  const std::string under_file = (file / "ckpt" / "m-{epoch:02d}.h5").string();
  expect_error<IOError>([&] { fit_with(std::make_shared<ModelCheckpoint>(under_file)); },
                        {(file / "ckpt").string()});
  expect_error<IOError>(
      [&] { fit_with(std::make_shared<ModelCheckpoint>("/dev/null/m-{epoch:02d}.h5")); },
      {"/dev/null"});
  for (const fs::path& p : {file, fs::path("/dev/null"), file / "backup"}) {
    expect_error<IOError>([&] { fit_with(std::make_shared<BackupAndRestore>(p.string())); },
                          {"backup_dir", p.string()});
  }
}

// A read-only file system (root ignores permission bits, not this): BackupAndRestore says so
// before training, rather than after the first epoch.
TEST(SavingAtomicTemporaries, ReadOnlyBackupDirFailsBeforeTraining) {
  const fs::path dir = h5::temp_dir("read_only");
  if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_RDONLY, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a read-only tmpfs here: " << std::strerror(errno);
  }
  auto model = small_model();
  model->compile("sgd", "mse");
  int batches = 0;
  auto count = std::make_shared<LambdaCallback>(
      LambdaCallbackOptions().on_batch_end([&](int, const Logs&) { ++batches; }));
  expect_error<IOError>(
      [&] {
        model->fit(random_normal({8, 3}), random_normal({8, 2}),
                   FitOptions().epochs(1).batch_size(4).verbose(0).callbacks(
                       {std::make_shared<BackupAndRestore>(dir.string()), count}));
      },
      {dir.string(), "not writable", "Read-only file system"});
  EXPECT_EQ(batches, 0);
  expect_error<IOError>([&] { model->save_weights((dir / "w.h5").string()); },
                        {"w.h5", "Read-only file system"});
  ::umount2(dir.c_str(), MNT_DETACH);
}

}  // namespace
}  // namespace strata

// Failures: missing, corrupt, truncated and non-HDF5 files, HDF5 files that are not Keras
// files, and atomicity: a save killed mid-write (SIGKILL) or failing leaves the previous file.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <strata/strata.h>

#include "framework/saving/atomic_file.h"
#include "framework/saving/training_checkpoint.h"
#include "layers/load_model.h"
#include "support/test_helpers.h"
#include "tests/framework/saving/h5_test_util.h"

extern char** environ;

namespace strata {
namespace {

namespace h5 = testing::h5;
using testing::expect_error;

std::shared_ptr<Sequential> small_model(int64_t units = 4) {
  auto m = std::make_shared<Sequential>(
      std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(units)});
  m->build({-1, 3});
  return m;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(SavingErrors, MissingFileIsAnIOErrorNamingThePath) {
  const std::string path = (h5::temp_dir("missing") / "nope.h5").string();
  auto model = small_model();
  expect_error<IOError>([&] { model->load_weights(path); }, {path, "No such file"});
  expect_error<IOError>([&] { load_model(path); }, {path, "No such file"});
  expect_error<IOError>([&] { saving::read_training_checkpoint(*model, path); }, {path});
}

TEST(SavingErrors, CorruptTruncatedAndNonHdf5Files) {
  const auto dir = h5::temp_dir("corrupt");
  auto model = small_model();

  std::string random(4096, '\0');
  uint32_t state = 12345;
  for (char& c : random) {
    state = state * 1664525u + 1013904223u;
    c = char(state >> 24);
  }
  const std::string garbage = (dir / "random.h5").string();
  write_bytes(garbage, random);
  const std::string text = (dir / "text.h5").string();
  write_bytes(text, "this is not an HDF5 file\n");
  const std::string empty = (dir / "empty.h5").string();
  write_bytes(empty, "");

  // A real file cut in half.
  const std::string whole = (dir / "whole.h5").string();
  model->save(whole);
  std::ifstream in(whole, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string truncated = (dir / "truncated.h5").string();
  write_bytes(truncated, bytes.substr(0, bytes.size() / 2));

  for (const std::string& path : {garbage, text, empty, truncated}) {
    SCOPED_TRACE(path);
    expect_error<ValueError>([&] { model->load_weights(path); },
                             {path, "not a valid HDF5/Keras file"});
    expect_error<ValueError>([&] { load_model(path); }, {path, "not a valid HDF5/Keras file"});
  }
}

TEST(SavingErrors, Hdf5FilesThatAreNotKerasFiles) {
  const auto dir = h5::temp_dir("notkeras");
  const std::string path = (dir / "plain.h5").string();
  {
    h5::Id f(h5::create_file(path));
    h5::Id g(h5::create_group(f, "something"));
  }
  auto model = small_model();
  expect_error<ValueError>([&] { model->load_weights(path); }, {path, "not a Keras weights file"});
  expect_error<ValueError>([&] { load_model(path); }, {path, "model_config"});
  // A weights-only file has no architecture.
  const std::string weights = (dir / "w.h5").string();
  model->save_weights(weights);
  expect_error<ValueError>([&] { load_model(weights); }, {weights, "model_config", "load_weights"});
  // layer_names names a group the file lacks.
  const std::string broken = (dir / "broken.h5").string();
  {
    h5::Id f(h5::create_file(broken));
    h5::write_vlen_strings(f, "layer_names", {"dense_x"}, H5T_CSET_ASCII);
  }
  expect_error<ValueError>([&] { model->load_weights(broken); },
                           {broken, "dense_x", "not a valid HDF5/Keras file"});
}

TEST(SavingErrors, ShapeMismatchNamesFileLayerWeightAndShapes) {
  const auto dir = h5::temp_dir("shapes");
  auto four = small_model(4);
  auto five = small_model(5);
  for (const std::string file : {"w.h5", "w.weights.h5"}) {
    const std::string path = (dir / file).string();
    four->save_weights(path);
    const std::string layer = five->layers()[0]->name();
    expect_error<ShapeError>([&] { five->load_weights(path); },
                             {path, "layer '" + layer + "'", layer + "/kernel", "[3,5]", "[3,4]"});
  }
  const std::string model_path = (dir / "m.h5").string();
  four->save(model_path);
  expect_error<ShapeError>([&] { five->load_weights(model_path); }, {model_path, "[3,5]", "[3,4]"});
}

TEST(SavingErrors, SaveErrors) {
  const auto dir = h5::temp_dir("saveerr");
  auto model = small_model();
  const std::string no_dir = (dir / "missing_dir" / "w.h5").string();
  expect_error<IOError>([&] { model->save_weights(no_dir); }, {no_dir, "does not exist"});
  expect_error<IOError>([&] { model->save(dir.string()); }, {dir.string(), "directory"});
  // A .keras file holds a whole model: save_weights() refuses it, as Keras 3 does.
  expect_error<ValueError>([&] { model->save_weights((dir / "w.keras").string()); },
                           {"w.keras", "save(", ".weights.h5"});
  Sequential unbuilt({std::make_shared<Dense>(2)});
  expect_error<ValueError>([&] { unbuilt.save_weights((dir / "u.h5").string()); },
                           {"not been built"});
  // A subclassed model has no storable architecture.
  class Sub : public Model {
   public:
    Sub() : Model("sub") { d_ = track(std::make_shared<Dense>(2)); }

   protected:
    Tensor call(const Tensor& x, bool training) override { return (*d_)(x, training); }

   private:
    std::shared_ptr<Dense> d_;
  };
  Sub sub;
  sub(random_normal({1, 3}));
  expect_error<ValueError>([&] { sub.save((dir / "s.h5").string()); }, {"subclassed", "save_weights"});
  sub.save_weights((dir / "s.h5").string());  // fine
}

// A write that fails midway (here: throws after writing part of the file) leaves the previous
// file and no temporary file behind.
TEST(SavingAtomic, FailedWriteLeavesThePreviousFile) {
  const auto dir = h5::temp_dir("failed");
  const std::string path = (dir / "w.h5").string();
  write_bytes(path, "previous");
  EXPECT_THROW(saving::write_file_atomically(path,
                                             [](const std::string& temp) {
                                               write_bytes(temp, "partial");
                                               throw IOError("disk full");
                                             }),
               IOError);
  std::ifstream in(path);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "previous");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

// The child half of KilledSaveLeavesThePreviousFile: saves a large model once to the path in
// STRATA_SAVING_CHILD. Skipped in a normal run.
TEST(SavingAtomic, ChildProcessSavesALargeModel) {
  const char* path = std::getenv("STRATA_SAVING_CHILD");
  if (path == nullptr) GTEST_SKIP() << "only run as the child of KilledSaveLeavesThePreviousFile";
  Sequential model({std::make_shared<Dense>(2048), std::make_shared<Dense>(2048)});
  model.build({-1, 2048});
  model.save_weights(path);
}

std::vector<std::filesystem::path> temporaries(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().find(".tmp-") != std::string::npos) out.push_back(e.path());
  }
  return out;
}

TEST(SavingAtomic, KilledSaveLeavesThePreviousFile) {
  const auto dir = h5::temp_dir("killed");
  const std::string path = (dir / "big.h5").string();
  // The previous file: the same architecture, every weight 0.5.
  Sequential previous({std::make_shared<Dense>(2048), std::make_shared<Dense>(2048)});
  previous.build({-1, 2048});
  for (const auto& v : previous.weights()) v->assign(full(v->shape(), 0.5));
  previous.save_weights(path);
  const auto previous_size = std::filesystem::file_size(path);

  bool killed_mid_write = false;
  for (int attempt = 0; attempt < 5 && !killed_mid_write; ++attempt) {
    // A fresh process (not a fork of this multi-threaded one) runs the saving child test.
    const std::string env_var = "STRATA_SAVING_CHILD=" + path;
    std::vector<char*> env;
    for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
    env.push_back(const_cast<char*>(env_var.c_str()));
    env.push_back(nullptr);
    std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
    std::string filter = "--gtest_filter=SavingAtomic.ChildProcessSavesALargeModel";
    char* argv[] = {exe.data(), filter.data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t child = 0;
    ASSERT_EQ(posix_spawn(&child, exe.c_str(), &actions, nullptr, argv, env.data()), 0);
    posix_spawn_file_actions_destroy(&actions);

    // Kill it as soon as its temporary file has some data in it (mid-write).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    bool exited = false;
    while (std::chrono::steady_clock::now() < deadline) {
      bool writing = false;
      for (const auto& t : temporaries(dir)) {
        std::error_code ec;
        writing = writing || std::filesystem::file_size(t, ec) > 4096;
      }
      if (writing) break;
      int status = 0;
      if (waitpid(child, &status, WNOHANG) == child) {
        exited = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (!exited) {
      kill(child, SIGKILL);
      int status = 0;
      waitpid(child, &status, 0);
    }
    const auto left = temporaries(dir);
    killed_mid_write = !left.empty();
    for (const auto& t : left) std::filesystem::remove(t);
    if (!killed_mid_write) previous.save_weights(path);  // the child finished: start over
  }
  ASSERT_TRUE(killed_mid_write) << "could not catch the child mid-write in 5 attempts";

  // The target is the complete previous file, and loads.
  EXPECT_EQ(std::filesystem::file_size(path), previous_size);
  Sequential loaded({std::make_shared<Dense>(2048), std::make_shared<Dense>(2048)});
  loaded.build({-1, 2048});
  loaded.load_weights(path);
  for (const auto& v : loaded.weights()) {
    const std::vector<float> values = v->read_value().to_vector<float>();
    EXPECT_TRUE(std::all_of(values.begin(), values.end(), [](float x) { return x == 0.5f; }))
        << v->name();
  }
}

}  // namespace
}  // namespace strata

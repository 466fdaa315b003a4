// Internal: the file BackupAndRestore writes and reads. Any model (subclassed ones included:
// no architecture is stored) with its optimizer state and the trainer's state as JSON, in one
// HDF5 file written atomically:
//   /model_weights/...        Keras 2 weights layout (as save_weights)
//   /optimizer_weights/...    Keras 2 optimizer layout (as Model::save)
//   root attribute "training_state": the caller's JSON string
#pragma once

#include <functional>
#include <string>

namespace strata {
class Model;
}

namespace strata::saving {

// Writes `model`'s weights, its optimizer's variables (when compiled; slots are created first
// if missing) and `state_json` to `path`, atomically; `before_replace` runs just before the new
// file replaces `path` (write_file_atomically's before_rename).
void write_training_checkpoint(const Model& model, const std::string& path,
                               const std::string& state_json,
                               const std::function<void()>& before_replace = {});
// Restores weights and optimizer variables from `path` (same model architecture) and returns
// the stored state JSON. Errors name the file, layer, weight and shapes, or the damaged
// attribute or group.
std::string read_training_checkpoint(Model& model, const std::string& path);

}  // namespace strata::saving

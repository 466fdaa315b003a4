#include "framework/saving/optimizer_weights_format.h"

#include "framework/core/error.h"
#include "framework/optimizers/optimizer.h"
#include "framework/saving/keras3_optimizer_format.h"
#include "framework/saving/keras_attributes.h"

namespace strata::saving {
namespace {

constexpr const char* kGroup = "optimizer_weights";

// "Adam/dense/kernel/m:0" -> "m": the kind of variable (the step counter "iter", or a slot "m",
// "v", "momentum", ...). The rest of the name depends on the optimizer's and the layers' names,
// which differ between two instances of the same model (auto-generated "dense_3" vs "dense_7"),
// and Keras itself matches by order; the kind still catches a file from another optimizer.
std::string variable_kind(std::string name) {
  if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) name.resize(name.size() - 2);
  const size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

}  // namespace

void write_optimizer_weights(hdf5::Group& root, optimizers::Optimizer& optimizer,
                             const std::vector<VariablePtr>& trainable) {
  optimizer.build(trainable);
  const std::vector<VariablePtr> variables = optimizer.variables();
  std::vector<std::string> names;
  for (const VariablePtr& v : variables) names.push_back(keras2_weight_name(*v));
  hdf5::Group group = root.create_group(kGroup);
  write_string_list_attribute(group, "weight_names", names);
  for (size_t i = 0; i < variables.size(); ++i) {
    group.write_dataset(names[i], variables[i]->read_value());
  }
}

namespace {

// Keras 3's legacy .h5 (save_model_to_hdf5 of Keras 3): the names are Keras 3 variable paths
// ("adam/iteration", "adam/learning_rate", "adam/dense_kernel_momentum", ...) and the list is
// Keras 3's optimizer.variables, learning rate included (keras3_optimizer_format.h).
std::string restore_keras3_names(const hdf5::Group& group, const std::vector<std::string>& names,
                                 optimizers::Optimizer& optimizer,
                                 const std::vector<VariablePtr>& trainable,
                                 const std::string& file) {
  std::vector<SavedOptimizerValue> saved;
  for (const std::string& name : names) {
    saved.push_back({std::string(kGroup) + "/" + name, name, group.dataset_shape(name),
                     [group, name](DType dtype) { return group.read_dataset(name, dtype); }});
  }
  return restore_keras3_optimizer(optimizer, trainable, saved, file);
}

}  // namespace

bool read_optimizer_weights(const hdf5::Group& root, optimizers::Optimizer& optimizer,
                            const std::vector<VariablePtr>& trainable, bool strict,
                            const std::vector<VariablePtr>* keras3_trainable) {
  const hdf5::Group group = root.open_group(kGroup);
  const std::vector<std::string> names = read_string_list_attribute(group, "weight_names");
  optimizer.build(trainable);
  const std::vector<VariablePtr> variables = optimizer.variables();
  const std::string& file = root.file_path();

  // Every check first: a mismatch leaves the optimizer as it is (freshly initialized).
  std::string problem;
  bool shape_problem = false;
  if (!names.empty() && variable_kind(names[0]) == "iteration") {  // Keras 3 (Keras 2: "iter")
    problem = restore_keras3_names(group, names, optimizer,
                                   keras3_trainable ? *keras3_trainable : trainable, file);
    if (problem.empty()) return true;
  } else if (names.size() != variables.size()) {
    problem = "optimizer '" + optimizer.name() + "' has " + std::to_string(variables.size()) +
              " variables, '" + file + "' holds " + std::to_string(names.size());
  }
  for (size_t i = 0; problem.empty() && i < variables.size(); ++i) {
    const VariablePtr& v = variables[i];
    if (variable_kind(names[i]) != variable_kind(v->name())) {
      problem = "optimizer variable #" + std::to_string(i) + " is '" + v->name() + "', '" + file +
                "' holds '" + names[i] + "' there";
      break;
    }
    const Shape saved = group.dataset_shape(names[i]);
    if (saved != v->shape()) {
      problem = "'" + file + "', optimizer variable '" + v->name() + "': expected shape " +
                v->shape().to_string() + ", the file holds shape " + saved.to_string();
      shape_problem = true;
    }
  }
  if (!problem.empty()) {
    if (strict) {
      const std::string msg = "Loading optimizer state: " + problem +
                              "; restore into the model and optimizer the file was saved from";
      if (shape_problem) throw ShapeError(msg);
      throw ValueError(msg);
    }
    warn("Error in loading the saved optimizer state (" + problem +
         "). As a result, your model is starting with a freshly initialized optimizer.");
    return false;
  }
  std::vector<Tensor> values;
  for (size_t i = 0; i < variables.size(); ++i) {
    values.push_back(group.read_dataset(names[i], variables[i]->dtype()));
  }
  for (size_t i = 0; i < variables.size(); ++i) variables[i]->assign(values[i]);
  return true;
}

}  // namespace strata::saving

#include "framework/losses/loss_factory.h"

#include <functional>
#include <map>

#include "framework/core/error.h"
#include "framework/losses/crossentropy.h"
#include "framework/losses/regression.h"

namespace strata::losses {

std::shared_ptr<Loss> get(const std::string& identifier) {
  using Factory = std::function<std::shared_ptr<Loss>()>;
  static const std::map<std::string, Factory> registry = {
      {"sparse_categorical_crossentropy", [] { return std::make_shared<SparseCategoricalCrossentropy>(); }},
      {"SparseCategoricalCrossentropy", [] { return std::make_shared<SparseCategoricalCrossentropy>(); }},
      {"categorical_crossentropy", [] { return std::make_shared<CategoricalCrossentropy>(); }},
      {"CategoricalCrossentropy", [] { return std::make_shared<CategoricalCrossentropy>(); }},
      {"binary_crossentropy", [] { return std::make_shared<BinaryCrossentropy>(); }},
      {"BinaryCrossentropy", [] { return std::make_shared<BinaryCrossentropy>(); }},
      {"mean_squared_error", [] { return std::make_shared<MeanSquaredError>(); }},
      {"MeanSquaredError", [] { return std::make_shared<MeanSquaredError>(); }},
      {"mse", [] { return std::make_shared<MeanSquaredError>(); }},
      {"MSE", [] { return std::make_shared<MeanSquaredError>(); }},
      {"mean_absolute_error", [] { return std::make_shared<MeanAbsoluteError>(); }},
      {"MeanAbsoluteError", [] { return std::make_shared<MeanAbsoluteError>(); }},
      {"mae", [] { return std::make_shared<MeanAbsoluteError>(); }},
      {"MAE", [] { return std::make_shared<MeanAbsoluteError>(); }},
      {"huber", [] { return std::make_shared<Huber>(); }},
      {"huber_loss", [] { return std::make_shared<Huber>(); }},
      {"Huber", [] { return std::make_shared<Huber>(); }},
  };
  const auto it = registry.find(identifier);
  if (it != registry.end()) return it->second();
  std::string names;
  for (const auto& [name, factory] : registry) names += (names.empty() ? "" : ", ") + name;
  throw ValueError("losses::get: could not interpret loss identifier '" + identifier +
                   "'; valid names: " + names);
}

}  // namespace strata::losses

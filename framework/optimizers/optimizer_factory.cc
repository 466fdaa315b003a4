#include "framework/optimizers/optimizer_factory.h"

#include <algorithm>
#include <cctype>

#include "framework/core/error.h"
#include "framework/optimizers/adagrad.h"
#include "framework/optimizers/adam.h"
#include "framework/optimizers/adamw.h"
#include "framework/optimizers/rmsprop.h"
#include "framework/optimizers/sgd.h"

namespace strata::optimizers {

std::shared_ptr<Optimizer> get(const std::string& identifier) {
  std::string key = identifier;
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  if (key == "sgd") return std::make_shared<SGD>();
  if (key == "adam") return std::make_shared<Adam>();
  if (key == "adamw") return std::make_shared<AdamW>();
  if (key == "rmsprop") return std::make_shared<RMSprop>();
  if (key == "adagrad") return std::make_shared<Adagrad>();
  throw ValueError("optimizers::get: could not interpret optimizer identifier '" + identifier +
                   "'; valid names: adagrad, adam, adamw, rmsprop, sgd");
}

}  // namespace strata::optimizers

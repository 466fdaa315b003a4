#include "framework/metrics/metric_factory.h"

#include <functional>
#include <map>

#include "framework/losses/crossentropy.h"
#include "framework/losses/regression.h"
#include "framework/metrics/accuracy.h"
#include "framework/metrics/confusion.h"
#include "framework/metrics/mean.h"

namespace strata::metrics {
namespace {

using Factory = std::function<std::shared_ptr<Metric>(const std::string& name)>;

template <typename M>
Factory make() {
  return [](const std::string& name) { return std::make_shared<M>(); };
}
// The metric object under the identifier the user gave.
template <typename M>
Factory named() {
  return [](const std::string& name) -> std::shared_ptr<Metric> {
    if constexpr (std::is_constructible_v<M, std::string>) {
      return std::make_shared<M>(name);
    } else {
      return std::make_shared<M>(std::vector<double>{0.5}, name);
    }
  };
}
Factory wrap(MeanMetricWrapper::Fn fn) {
  return [fn](const std::string& name) { return std::make_shared<MeanMetricWrapper>(fn, name); };
}

const std::map<std::string, Factory>& registry() {
  using namespace losses;
  static const std::map<std::string, Factory> r = {
      {"accuracy", named<Accuracy>()},
      {"acc", named<Accuracy>()},
      {"binary_accuracy", [](const std::string& n) { return std::make_shared<BinaryAccuracy>(0.5, n); }},
      {"sparse_categorical_accuracy", named<SparseCategoricalAccuracy>()},
      {"categorical_accuracy", named<CategoricalAccuracy>()},
      {"top_k_categorical_accuracy", [](const std::string& n) { return std::make_shared<TopKCategoricalAccuracy>(5, n); }},
      {"sparse_top_k_categorical_accuracy", [](const std::string& n) { return std::make_shared<SparseTopKCategoricalAccuracy>(5, n); }},
      {"precision", named<Precision>()},
      {"recall", named<Recall>()},
      {"auc", [](const std::string& n) { return std::make_shared<AUC>(200, "ROC", "interpolation", n); }},
      {"mean_squared_error", wrap([](const Tensor& t, const Tensor& p) { return mean_squared_error(t, p); })},
      {"mse", wrap([](const Tensor& t, const Tensor& p) { return mean_squared_error(t, p); })},
      {"mean_absolute_error", wrap([](const Tensor& t, const Tensor& p) { return mean_absolute_error(t, p); })},
      {"mae", wrap([](const Tensor& t, const Tensor& p) { return mean_absolute_error(t, p); })},
      {"binary_crossentropy", wrap([](const Tensor& t, const Tensor& p) { return binary_crossentropy(t, p); })},
      {"categorical_crossentropy", wrap([](const Tensor& t, const Tensor& p) { return categorical_crossentropy(t, p); })},
      {"sparse_categorical_crossentropy", wrap([](const Tensor& t, const Tensor& p) { return sparse_categorical_crossentropy(t, p); })},
      // Class names: Keras' default metric names.
      {"Accuracy", make<Accuracy>()},
      {"BinaryAccuracy", make<BinaryAccuracy>()},
      {"SparseCategoricalAccuracy", make<SparseCategoricalAccuracy>()},
      {"CategoricalAccuracy", make<CategoricalAccuracy>()},
      {"TopKCategoricalAccuracy", make<TopKCategoricalAccuracy>()},
      {"SparseTopKCategoricalAccuracy", make<SparseTopKCategoricalAccuracy>()},
      {"Precision", make<Precision>()},
      {"Recall", make<Recall>()},
      {"AUC", make<AUC>()},
      {"Mean", make<Mean>()},
      {"Sum", make<Sum>()},
  };
  return r;
}

bool is_loss(const std::string& loss_name, const char* function_name, const char* class_name) {
  return loss_name == function_name || loss_name == class_name;
}

}  // namespace

std::shared_ptr<Metric> get(const std::string& identifier) {
  const auto& r = registry();
  const auto it = r.find(identifier);
  if (it != r.end()) return it->second(identifier);
  std::string names;
  for (const auto& [name, factory] : r) names += (names.empty() ? "" : ", ") + name;
  throw ValueError("metrics::get: could not interpret metric identifier '" + identifier +
                   "'; valid names: " + names);
}

std::shared_ptr<Metric> resolve_accuracy(const std::string& loss_name, const Shape& y_true_shape,
                                         const Shape& y_pred_shape, const std::string& name) {
  const bool binary_loss = is_loss(loss_name, "binary_crossentropy", "BinaryCrossentropy");
  const bool sparse_loss =
      is_loss(loss_name, "sparse_categorical_crossentropy", "SparseCategoricalCrossentropy");
  // A rank-0/1 y_pred is one score per sample; Keras would read its batch axis as classes.
  const int64_t pred_last = y_pred_shape.rank() >= 2 ? y_pred_shape.dim(-1) : 1;
  const int64_t true_last = y_true_shape.rank() >= 1 ? y_true_shape.dim(-1) : 1;
  if (binary_loss || pred_last == 1) return std::make_shared<BinaryAccuracy>(0.5, name);
  const bool sparse = sparse_loss || y_true_shape.rank() < y_pred_shape.rank() ||
                      (true_last == 1 && pred_last > 1);
  if (sparse) return std::make_shared<SparseCategoricalAccuracy>(name);
  return std::make_shared<CategoricalAccuracy>(name);
}

}  // namespace strata::metrics

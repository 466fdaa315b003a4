// Internal helpers shared by the loss functions: argument checks and Keras's rank matching.
#pragma once

#include <utility>

#include "framework/core/tensor.h"

namespace strata::losses::detail {

// Throws DTypeError naming `fn` unless y_pred is floating.
void check_prediction(const char* fn, const Tensor& y_pred);

// Keras's squeeze_or_expand_to_same_rank: when the ranks differ by one and the longer tensor
// ends in a size-1 axis, the shorter one gains that axis if it has rank 1, otherwise the longer
// one loses it. [N] labels against [N, 1] predictions become [N, 1].
std::pair<Tensor, Tensor> match_ranks(const Tensor& a, const Tensor& b);

// {y_true, y_pred} matched in rank (match_ranks), y_true cast to y_pred's dtype; ShapeError
// naming `fn` when the shapes still differ (silently broadcasting [N] against [N, 1] to [N, N]
// is a classic bug).
std::pair<Tensor, Tensor> aligned(const char* fn, const Tensor& y_true, const Tensor& y_pred);

// Throws ValueError naming `fn` unless 0 <= label_smoothing <= 1.
void check_label_smoothing(const char* fn, double label_smoothing);

}  // namespace strata::losses::detail

// CentralVariable: CentralStorageStrategy's variables (TensorFlow's AggregatingVariable). One
// copy on the parameter device that every replica computes with; in a replica, an update is
// combined over the replicas by the variable's aggregation and written once, by replica 0,
// while the others wait (so nobody reads a half-written value).
#pragma once

#include "framework/variables/variable.h"

namespace strata::distribute {

class CentralVariable final : public Variable {
 public:
  explicit CentralVariable(const VariableSpec& spec);

  Device device() const override { return central_->device(); }
  Tensor value() const override;
  void assign(const Tensor& value) override;
  void assign_add(const Tensor& delta) override;
  void assign_sub(const Tensor& delta) override;
  Tensor gradient_handle() const override { return central_->gradient_handle(); }
  // Applied once, by replica 0, while every replica waits (the batch's sync).
  void apply_update(const VariableUpdate& update, UpdateBatch& batch) override;

 protected:
  Tensor& storage() override { return storage_of(*central_); }

 private:
  enum class Update { kAssign, kAdd, kSub };
  void update(const Tensor& value, Update kind, const char* op);

  VariablePtr central_;
};

}  // namespace strata::distribute

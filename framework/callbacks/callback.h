// Callback: hooks into fit / evaluate / predict with Keras' method names. Subclass and override
// what you need; `model()` is the model being trained (set by fit before on_train_begin).
#pragma once

#include <memory>
#include <vector>

#include "framework/callbacks/logs.h"

namespace strata {

class Model;

class Callback {
 public:
  virtual ~Callback() = default;

  virtual void on_train_begin(const Logs& logs) {}
  virtual void on_train_end(const Logs& logs) {}
  virtual void on_epoch_begin(int epoch, const Logs& logs) {}
  virtual void on_epoch_end(int epoch, const Logs& logs) {}
  virtual void on_train_batch_begin(int batch, const Logs& logs) {}
  virtual void on_train_batch_end(int batch, const Logs& logs) {}
  virtual void on_test_begin(const Logs& logs) {}
  virtual void on_test_end(const Logs& logs) {}
  virtual void on_test_batch_begin(int batch, const Logs& logs) {}
  virtual void on_test_batch_end(int batch, const Logs& logs) {}
  virtual void on_predict_begin(const Logs& logs) {}
  virtual void on_predict_end(const Logs& logs) {}
  virtual void on_predict_batch_begin(int batch, const Logs& logs) {}
  virtual void on_predict_batch_end(int batch, const Logs& logs) {}
  // SIGTERM or SIGINT (`signal`) reached fit (any worker of a multi-worker job: all are called
  // after the same step); it stops with TrainingInterrupted next: save what must survive.
  virtual void on_preemption(int signal) {}

  // Whether this callback does something at batch level (a train, test or predict batch hook).
  // fit under ParameterServerStrategy runs no batch hooks and refuses such callbacks, as
  // TensorFlow does. C++ cannot tell portably whether a subclass overrides a hook, so a callback
  // says so itself: true by default (refused under PS, with a message saying how to declare it);
  // built-in callbacks answer from their configuration, and a callback derived from
  // EpochCallback (below) cannot have batch hooks and answers false.
  virtual bool implements_batch_hooks() const { return true; }

  // Training parameters Keras passes to callbacks: epochs, steps (per epoch; -1 unknown),
  // verbose.
  struct Params {
    int epochs = 1;
    int64_t steps = -1;
    int verbose = 1;
  };
  virtual void set_params(const Params& params) { params_ = params; }
  virtual void set_model(Model* model) { model_ = model; }
  Model* model() const { return model_; }
  const Params& params() const { return params_; }

 private:
  Model* model_ = nullptr;
  Params params_;
};

using CallbackPtr = std::shared_ptr<Callback>;

// Calls every callback in order.
// A callback with epoch-, train-, test- and predict-level hooks only: its batch hooks are final
// no-ops, so the compiler refuses a batch hook and fit under ParameterServerStrategy accepts it.
class EpochCallback : public Callback {
 public:
  void on_train_batch_begin(int, const Logs&) final {}
  void on_train_batch_end(int, const Logs&) final {}
  void on_test_batch_begin(int, const Logs&) final {}
  void on_test_batch_end(int, const Logs&) final {}
  void on_predict_batch_begin(int, const Logs&) final {}
  void on_predict_batch_end(int, const Logs&) final {}
  bool implements_batch_hooks() const final { return false; }
};

class CallbackList : public Callback {
 public:
  explicit CallbackList(std::vector<CallbackPtr> callbacks = {}) : callbacks_(std::move(callbacks)) {}
  void append(CallbackPtr c) { callbacks_.push_back(std::move(c)); }
  const std::vector<CallbackPtr>& callbacks() const { return callbacks_; }

  void on_train_begin(const Logs& l) override { for (auto& c : callbacks_) c->on_train_begin(l); }
  void on_train_end(const Logs& l) override { for (auto& c : callbacks_) c->on_train_end(l); }
  void on_epoch_begin(int e, const Logs& l) override { for (auto& c : callbacks_) c->on_epoch_begin(e, l); }
  void on_epoch_end(int e, const Logs& l) override { for (auto& c : callbacks_) c->on_epoch_end(e, l); }
  void on_train_batch_begin(int b, const Logs& l) override { for (auto& c : callbacks_) c->on_train_batch_begin(b, l); }
  void on_train_batch_end(int b, const Logs& l) override { for (auto& c : callbacks_) c->on_train_batch_end(b, l); }
  void on_test_begin(const Logs& l) override { for (auto& c : callbacks_) c->on_test_begin(l); }
  void on_test_end(const Logs& l) override { for (auto& c : callbacks_) c->on_test_end(l); }
  void on_test_batch_begin(int b, const Logs& l) override { for (auto& c : callbacks_) c->on_test_batch_begin(b, l); }
  void on_test_batch_end(int b, const Logs& l) override { for (auto& c : callbacks_) c->on_test_batch_end(b, l); }
  void on_predict_begin(const Logs& l) override { for (auto& c : callbacks_) c->on_predict_begin(l); }
  void on_predict_end(const Logs& l) override { for (auto& c : callbacks_) c->on_predict_end(l); }
  void on_predict_batch_begin(int b, const Logs& l) override { for (auto& c : callbacks_) c->on_predict_batch_begin(b, l); }
  void on_predict_batch_end(int b, const Logs& l) override { for (auto& c : callbacks_) c->on_predict_batch_end(b, l); }
  void on_preemption(int s) override { for (auto& c : callbacks_) c->on_preemption(s); }
  bool implements_batch_hooks() const override {
    for (const auto& c : callbacks_) {
      if (c->implements_batch_hooks()) return true;
    }
    return false;
  }
  void set_params(const Params& p) override {
    Callback::set_params(p);
    for (auto& c : callbacks_) c->set_params(p);
  }
  void set_model(Model* m) override {
    Callback::set_model(m);
    for (auto& c : callbacks_) c->set_model(m);
  }

 private:
  std::vector<CallbackPtr> callbacks_;
};

}  // namespace strata

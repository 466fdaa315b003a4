#include "distribute/parameter_server/wire/tensor_wire.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "framework/core/error.h"

// The wire is little-endian and tensors are copied as bytes: a big-endian host would need a
// byte swap here.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "parameter_server tensor_wire copies raw little-endian bytes");

namespace strata::distribute::ps_wire {

pb::DataType to_proto(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return pb::DT_FLOAT32;
    case DType::kFloat64: return pb::DT_FLOAT64;
    case DType::kFloat16: return pb::DT_FLOAT16;
    case DType::kBFloat16: return pb::DT_BFLOAT16;
    case DType::kInt32: return pb::DT_INT32;
    case DType::kInt64: return pb::DT_INT64;
    case DType::kUInt8: return pb::DT_UINT8;
    case DType::kBool: return pb::DT_BOOL;
  }
  throw InternalError("ps_wire::to_proto: a DType without a wire number");
}

DType from_proto(int dtype, const std::string& what) {
  switch (dtype) {
    case pb::DT_FLOAT32: return DType::kFloat32;
    case pb::DT_FLOAT64: return DType::kFloat64;
    case pb::DT_FLOAT16: return DType::kFloat16;
    case pb::DT_BFLOAT16: return DType::kBFloat16;
    case pb::DT_INT32: return DType::kInt32;
    case pb::DT_INT64: return DType::kInt64;
    case pb::DT_UINT8: return DType::kUInt8;
    case pb::DT_BOOL: return DType::kBool;
    default: break;
  }
  throw ValueError(what + ".dtype: " + std::to_string(dtype) +
                   " is not a dtype this parameter server knows (expected 1..8, "
                   "parameter_server.proto's DataType); the sender runs another Strata version "
                   "or sent a malformed request");
}

size_t to_proto(const Tensor& t, pb::TensorProto* out) {
  const Tensor host = t.to(Device::cpu());
  out->set_dtype(to_proto(host.dtype()));
  out->clear_dims();
  for (int64_t d : host.shape().dims()) out->add_dims(d);
  out->set_data(static_cast<const char*>(host.raw_data()), host.nbytes());
  return host.nbytes();
}

Tensor from_proto(const pb::TensorProto& proto, const std::string& what, size_t max_bytes) {
  const DType dtype = from_proto(proto.dtype(), what);
  const size_t item = dtype_size(dtype);
  if (proto.dims_size() > kMaxRank) {
    throw ValueError(what + ".dims: rank " + std::to_string(proto.dims_size()) +
                     " is above the " + std::to_string(kMaxRank) +
                     " dimensions a parameter server takes");
  }
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  // numel * itemsize, refusing negative dims and products past max_bytes (no overflow: each
  // factor is checked against the bound before multiplying). The product of the non-zero dims
  // is bounded too: a tensor with a zero dim holds no bytes, but its other dims still make
  // strides and row sizes, which must not overflow either ([0, 2^40, 2^40]).
  size_t extent = item;   // itemsize * the product of the non-zero dims
  bool empty = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      throw ValueError(what + ".dims[" + std::to_string(i) + "] is " + std::to_string(dims[i]) +
                       ": dims must be non-negative");
    }
    if (dims[i] == 0) {
      empty = true;
      continue;
    }
    if (size_t(dims[i]) > max_bytes || extent > max_bytes / size_t(dims[i])) {
      throw ValueError(what + ": shape " + Shape(dims).to_string() + " of " + dtype_name(dtype) +
                       " exceeds the bound of " + std::to_string(max_bytes) +
                       " bytes per tensor (ParameterServerOptions::max_message_bytes)");
    }
    extent *= size_t(dims[i]);
  }
  if (extent > max_bytes) {   // a scalar of an itemsize above the bound
    throw ValueError(what + ": " + std::to_string(extent) + " bytes exceed the bound of " +
                     std::to_string(max_bytes) + " bytes per tensor");
  }
  const size_t bytes = empty ? 0 : extent;
  if (proto.data().size() != bytes) {
    throw ValueError(what + ".data has " + std::to_string(proto.data().size()) +
                     " bytes, expected " + std::to_string(bytes) + " (shape " +
                     Shape(dims).to_string() + " of " + dtype_name(dtype) +
                     ", row-major, little-endian)");
  }
  // A bool is one byte holding 0 or 1: any other byte would be read as a bool that is neither.
  if (dtype == DType::kBool) {
    const std::string& data = proto.data();
    for (size_t i = 0; i < data.size(); ++i) {
      if (data[i] != 0 && data[i] != 1) {
        throw ValueError(what + ".data[" + std::to_string(i) + "] is " +
                         std::to_string(int(static_cast<unsigned char>(data[i]))) +
                         ": a bool tensor's bytes must be 0 or 1");
      }
    }
  }
  Tensor t = Tensor::empty(Shape(std::move(dims)), dtype, Device::cpu());
  if (bytes != 0) std::memcpy(t.raw_data(), proto.data().data(), bytes);
  return t;
}

void to_proto(const OptimizerUpdate& r, pb::OptimizerUpdate* out) {
  out->set_kind(pb::OptimizerUpdate::Kind(int(r.kind)));
  out->set_learning_rate(r.learning_rate);
  out->set_momentum(r.momentum);
  out->set_nesterov(r.nesterov);
  out->set_beta_1(r.beta_1);
  out->set_beta_2(r.beta_2);
  out->set_amsgrad(r.amsgrad);
  out->set_rho(r.rho);
  out->set_centered(r.centered);
  out->set_epsilon(r.epsilon);
  out->set_weight_decay(r.weight_decay);
  out->set_step(r.step);
  out->set_grad_scale(r.grad_scale);
  out->set_clip_value(r.clip_value);
}

namespace {

// The checks of one hyper-parameter: `ok` says whether `value` is allowed; the message names
// the field, the value and what is allowed.
void check_field(bool ok, const std::string& what, const char* field, double value,
                 const char* allowed) {
  if (ok) return;
  std::ostringstream os;
  os << what << "." << field << " is " << value << ": expected " << allowed;
  throw ValueError(os.str());
}

bool within(double v, double lo, double hi) { return v >= lo && v <= hi; }   // false for NaN

}  // namespace

OptimizerUpdate from_proto(const pb::OptimizerUpdate& p, const std::string& what) {
  OptimizerUpdate r;
  switch (p.kind()) {
    case pb::OptimizerUpdate::SGD: r.kind = OptimizerKind::kSGD; break;
    case pb::OptimizerUpdate::ADAM: r.kind = OptimizerKind::kAdam; break;
    case pb::OptimizerUpdate::ADAMW: r.kind = OptimizerKind::kAdamW; break;
    case pb::OptimizerUpdate::RMSPROP: r.kind = OptimizerKind::kRMSprop; break;
    case pb::OptimizerUpdate::ADAGRAD: r.kind = OptimizerKind::kAdagrad; break;
    default:
      throw ValueError(what + ".kind: " + std::to_string(int(p.kind())) +
                       " is not an optimizer this parameter server knows (expected 0..4)");
  }
  // The ranges the optimizers' constructors enforce (sgd.cc, adam.cc, rmsprop.cc, ...), for
  // every field whatever the kind (an OptimizerUpdate's defaults satisfy them all).
  constexpr double kMax = std::numeric_limits<double>::max();
  check_field(within(p.learning_rate(), 0.0, kMax), what, "learning_rate", p.learning_rate(),
              "a finite number >= 0");
  check_field(within(p.momentum(), 0.0, 1.0), what, "momentum", p.momentum(),
              "a number in [0, 1]");
  check_field(within(p.beta_1(), 0.0, 1.0) && p.beta_1() < 1.0f, what, "beta_1", p.beta_1(),
              "a number in [0, 1)");
  check_field(within(p.beta_2(), 0.0, 1.0) && p.beta_2() < 1.0f, what, "beta_2", p.beta_2(),
              "a number in [0, 1)");
  check_field(within(p.rho(), 0.0, 1.0) && p.rho() < 1.0f, what, "rho", p.rho(),
              "a number in [0, 1)");
  check_field(within(p.epsilon(), 0.0, kMax), what, "epsilon", p.epsilon(),
              "a finite number >= 0");
  check_field(within(p.weight_decay(), 0.0, kMax), what, "weight_decay", p.weight_decay(),
              "a finite number >= 0");
  check_field(within(p.clip_value(), 0.0, kMax), what, "clip_value", p.clip_value(),
              "a finite number >= 0 (0: no clipping)");
  // NaN is allowed: it is how a NaN gradient norm reaches the update under clipnorm, as in
  // Keras (the update is NaN, as it would be in local training).
  check_field(std::isnan(p.grad_scale()) || within(p.grad_scale(), 0.0, kMax), what,
              "grad_scale", p.grad_scale(), "a finite number >= 0, or NaN");
  if (p.step() < 1) {
    throw ValueError(what + ".step is " + std::to_string(p.step()) +
                     ": expected the 1-based count of updates (>= 1)");
  }
  r.learning_rate = p.learning_rate();
  r.momentum = p.momentum();
  r.nesterov = p.nesterov();
  r.beta_1 = p.beta_1();
  r.beta_2 = p.beta_2();
  r.amsgrad = p.amsgrad();
  r.rho = p.rho();
  r.centered = p.centered();
  r.epsilon = p.epsilon();
  r.weight_decay = p.weight_decay();
  r.step = p.step();
  r.grad_scale = p.grad_scale();
  r.clip_value = p.clip_value();
  return r;
}

}  // namespace strata::distribute::ps_wire

// Internal: tensors on the parameter service's wire (parameter_server.proto's TensorProto), and
// the checks that keep a malformed request from reaching a kernel: a known dtype, non-negative
// dims, exactly numel * itemsize bytes, and no more than a bound. Each failure is a ValueError
// naming the field (`what`), which the service answers as INVALID_ARGUMENT.
#pragma once

#include <cstddef>
#include <string>

#include "distribute/parameter_server/wire/parameter_server.pb.h"
#include "framework/backend/kernel_params.h"
#include "framework/core/tensor.h"

namespace strata::distribute::ps_wire {

namespace pb = ::strata::distribute::parameter_server_pb;

// The most dimensions a tensor on the wire may have (TensorFlow allows 254; Strata's layers use
// at most 5): a bound on the work and memory one message's shape can ask for.
constexpr int kMaxRank = 32;

// Writes `t` (any device; copied to the host) into `out`. Returns the bytes of its data.
size_t to_proto(const Tensor& t, pb::TensorProto* out);
// A new CPU tensor from `proto`; ValueError naming `what` and the field when it is malformed:
// an unknown dtype, a negative dim, a rank above kMaxRank, a shape whose non-zero dims make more
// than `max_bytes` (checked before anything is allocated), data of another size than
// numel * itemsize, a bool byte other than 0 or 1.
Tensor from_proto(const pb::TensorProto& proto, const std::string& what, size_t max_bytes);

pb::DataType to_proto(DType dtype);
// ValueError naming `what` for DT_INVALID or a number this binary does not know.
DType from_proto(int dtype, const std::string& what);

void to_proto(const ::strata::OptimizerUpdate& rule, pb::OptimizerUpdate* out);
// ValueError naming `what` and the field for an unknown kind or a hyper-parameter outside the
// range its optimizer's constructor allows (NaN, infinite or negative rates, a beta of 1, a
// step below 1).
::strata::OptimizerUpdate from_proto(const pb::OptimizerUpdate& proto, const std::string& what);

}  // namespace strata::distribute::ps_wire

// Strata: a Keras-style deep-learning training framework in C++.
//
//   #include <strata/strata.h>
//   using namespace strata;
//
//   set_random_seed(42);
//   Tensor x = random_normal({256, 8});
//   Tensor y = reduce_sum(x, {1}, /*keepdims=*/true);
//
//   Sequential model({std::make_shared<Dense>(16, "relu"), std::make_shared<Dense>(1)});
//   optimizers::Adam optimizer(1e-2);
//   losses::MeanSquaredError mse;
//   for (int step = 0; step < 200; ++step) {
//     GradientTape tape;
//     Tensor loss = mse(y, model(x, /*training=*/true));
//     auto vars = model.trainable_variables();
//     optimizer.apply_gradients(tape.gradient(loss, vars), vars);
//   }
//   std::cout << model(x).slice(0, 3) << "\n";   // prints like numpy
//
// The umbrella header: includes the whole public API, and nothing internal: what it reaches is
// exactly what `cmake --install` installs (framework/install.cmake). Areas have umbrellas of
// their own: <strata/distribute.h>, <strata/parameter_server.h>.
#pragma once

#include "strata/distribute.h"
#include "strata/parameter_server.h"

#include "datasets/cifar10.h"
#include "datasets/fashion_mnist.h"
#include "datasets/idx.h"
#include "datasets/image_coding.h"
#include "datasets/image_dataset.h"
#include "datasets/image_io.h"
#include "datasets/mnist.h"
#include "datasets/tfrecord/example_builder.h"
#include "datasets/tfrecord/example_parsing.h"
#include "datasets/tfrecord/tfrecord_dataset.h"
#include "framework/autograd/grad_mode.h"
#include "framework/backend/backend.h"
#include "framework/backend/cpu_runtime.h"
#include "framework/backend/gpu_runtime.h"
#include "framework/backend/kernel_params.h"
#include "framework/callbacks/backup_and_restore.h"
#include "framework/callbacks/callback.h"
#include "framework/callbacks/csv_logger.h"
#include "framework/callbacks/early_stopping.h"
#include "framework/callbacks/history.h"
#include "framework/callbacks/lambda_callback.h"
#include "framework/callbacks/learning_rate_scheduler.h"
#include "framework/callbacks/logs.h"
#include "framework/callbacks/model_checkpoint.h"
#include "framework/callbacks/progbar_logger.h"
#include "framework/callbacks/reduce_lr_on_plateau.h"
#include "framework/callbacks/tensorboard.h"
#include "framework/callbacks/terminate_on_nan.h"
#include "framework/config/devices.h"
#include "framework/config/json.h"
#include "framework/config/memory.h"
#include "framework/config/tensor_float_32.h"
#include "framework/core/device.h"
#include "framework/core/dtype.h"
#include "framework/core/error.h"
#include "framework/core/random.h"
#include "framework/core/shape.h"
#include "framework/core/tensor.h"
#include "framework/core/threading.h"
#include "framework/data/dataset.h"
#include "framework/data/file_sharding.h"
#include "framework/losses/losses.h"
#include "framework/metrics/metrics.h"
#include "framework/mixed_precision/mixed_precision.h"
#include "framework/model/dataset_creator.h"
#include "framework/model/keras_tensor.h"
#include "framework/model/layer.h"
#include "framework/model/model.h"
#include "framework/model/sequential.h"
#include "framework/model/training_args.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/shape_ops.h"
#include "framework/optimizers/optimizers.h"
#include "framework/saving/save_model.h"
#include "framework/strategy/gradient_reducer.h"
#include "framework/strategy/replica_context.h"
#include "framework/summary/event_file_reader.h"
#include "framework/summary/record_reader.h"
#include "framework/summary/summary_writer.h"
#include "framework/variables/creator_stack.h"
#include "framework/variables/initializers.h"
#include "framework/variables/regularizers.h"
#include "framework/variables/variable.h"
#include "layers/activation_layers.h"
#include "layers/batch_normalization.h"
#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/depthwise_conv2d.h"
#include "layers/dropout.h"
#include "layers/embedding.h"
#include "layers/keras_activation.h"
#include "layers/layer_normalization.h"
#include "layers/layer_registry.h"
#include "layers/layer_utils.h"
#include "layers/load_model.h"
#include "layers/merging.h"
#include "layers/model_serialization.h"
#include "layers/pooling.h"
#include "layers/prelu.h"
#include "layers/preprocessing/hashing.h"
#include "layers/preprocessing/integer_lookup.h"
#include "layers/preprocessing/normalization.h"
#include "layers/preprocessing/random_crop.h"
#include "layers/preprocessing/random_flip.h"
#include "layers/preprocessing/random_translation.h"
#include "layers/preprocessing/rescaling.h"
#include "layers/preprocessing/string_lookup.h"
#include "layers/reshaping.h"

// Seeds and the global random generator. Random numbers come from Philox-4x32-10, a
// counter-based generator: number i of a draw depends only on (seed, offset + i), so the same
// seed gives the same numbers whatever the thread count or device. The generator itself, one
// copy for the CPU and CUDA backends, is framework/kernels_math/philox.h (internal).
#pragma once

#include <cstdint>

namespace strata {

// Seeds the global generator (TensorFlow's tf.random.set_seed / keras.utils.set_random_seed).
void set_random_seed(uint64_t seed);

// The global generator's state, for checkpoints that must resume bit-identically.
struct GeneratorState {
  uint64_t seed = 0;
  uint64_t offset = 0;
};
GeneratorState get_generator_state();
void set_generator_state(const GeneratorState& state);

// Element i of a draw uses the Philox block at counter (offset + i, attempt), key = seed.
// Reserves `count` consecutive counters from the global generator and returns the state to
// draw them with; the next call continues after them.
GeneratorState reserve_random(uint64_t count);

// Gives this thread a generator of its own for the scope's lifetime: reserve_random() on this
// thread draws from `start` instead of the global generator. A strategy's replica threads use it
// so every replica draws its own reproducible stream (dropout masks) whatever the threads'
// timing; state() is where the thread's stream has got to.
class ThreadGeneratorScope {
 public:
  // `stream` names the thread's stream (a replica's id): seeded layers mix it in, see
  // thread_random_stream().
  ThreadGeneratorScope(GeneratorState start, uint64_t stream);
  ~ThreadGeneratorScope();
  ThreadGeneratorScope(const ThreadGeneratorScope&) = delete;
  ThreadGeneratorScope& operator=(const ThreadGeneratorScope&) = delete;
  GeneratorState state() const;

 private:
  bool had_previous_;
  GeneratorState previous_;
  uint64_t previous_stream_;
};

// 0 on threads drawing from the global generator (and on a strategy's replica 0); a replica's
// stream number on its thread. Layers with their own seed (Dropout(rate, seed)) keep one call
// count per stream and mix the stream in, so replicas draw different masks, reproducibly.
uint64_t thread_random_stream();

}  // namespace strata

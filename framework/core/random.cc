#include "framework/core/random.h"

#include <mutex>

namespace strata {
namespace {
// A fixed default seed (as PyTorch has one): runs are reproducible until the user seeds.
constexpr uint64_t kDefaultSeed = 0x5eed5eedULL;
std::mutex g_mutex;
GeneratorState g_state{kDefaultSeed, 0};
thread_local bool t_has_own = false;
thread_local GeneratorState t_own;
thread_local uint64_t t_stream = 0;
}  // namespace

ThreadGeneratorScope::ThreadGeneratorScope(GeneratorState start, uint64_t stream)
    : had_previous_(t_has_own), previous_(t_own), previous_stream_(t_stream) {
  t_has_own = true;
  t_own = start;
  t_stream = stream;
}

ThreadGeneratorScope::~ThreadGeneratorScope() {
  t_has_own = had_previous_;
  t_own = previous_;
  t_stream = previous_stream_;
}

uint64_t thread_random_stream() { return t_stream; }

GeneratorState ThreadGeneratorScope::state() const { return t_own; }

void set_random_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_state = {seed, 0};
}

GeneratorState get_generator_state() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_state;
}

void set_generator_state(const GeneratorState& state) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_state = state;
}

GeneratorState reserve_random(uint64_t count) {
  if (t_has_own) {
    GeneratorState s = t_own;
    t_own.offset += count;
    return s;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  GeneratorState s = g_state;
  g_state.offset += count;  // one Philox block per element: counters offset .. offset+count-1
  return s;
}

}  // namespace strata

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

namespace philox {

void block(uint64_t counter_lo, uint64_t counter_hi, uint64_t key, uint32_t out[4]) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  uint32_t c0 = uint32_t(counter_lo), c1 = uint32_t(counter_lo >> 32);
  uint32_t c2 = uint32_t(counter_hi), c3 = uint32_t(counter_hi >> 32);
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t(kMul0) * c0;
    const uint64_t p1 = uint64_t(kMul1) * c2;
    const uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n1 = uint32_t(p1);
    const uint32_t n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
    const uint32_t n3 = uint32_t(p0);
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

}  // namespace philox
}  // namespace strata

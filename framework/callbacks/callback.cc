#include "framework/callbacks/callback.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace strata {
namespace {

#if defined(__GXX_ABI_VERSION)
// The function a pointer to a virtual member of Callback calls on `object` (Itanium C++ ABI: a
// pointer to a virtual member holds its vtable offset; on ARM the "virtual" bit is in the
// adjustment, elsewhere in the offset's low bit). Null for a non-virtual pointer.
template <typename F>
const void* vtable_entry(const Callback& object, F Callback::*member) {
  struct Representation {
    std::ptrdiff_t ptr;
    std::ptrdiff_t adj;
  };
  static_assert(sizeof(member) == sizeof(Representation));
  Representation r;
  std::memcpy(&r, &member, sizeof r);
#if defined(__arm__) || defined(__aarch64__)
  if ((r.adj & 1) == 0) return nullptr;
  const std::ptrdiff_t offset = r.ptr;
#else
  if ((r.ptr & 1) == 0) return nullptr;
  const std::ptrdiff_t offset = r.ptr - 1;
#endif
  const char* vtable = *reinterpret_cast<const char* const*>(&object);
  return *reinterpret_cast<const void* const*>(vtable + offset);
}

template <typename F>
bool overrides(const Callback& object, F Callback::*member) {
  static const Callback base;
  const void* mine = vtable_entry(object, member);
  return mine == nullptr || mine != vtable_entry(base, member);
}
#endif

}  // namespace

bool Callback::implements_batch_hooks() const {
#if defined(__GXX_ABI_VERSION)
  return overrides(*this, &Callback::on_train_batch_begin) ||
         overrides(*this, &Callback::on_train_batch_end) ||
         overrides(*this, &Callback::on_test_batch_begin) ||
         overrides(*this, &Callback::on_test_batch_end) ||
         overrides(*this, &Callback::on_predict_batch_begin) ||
         overrides(*this, &Callback::on_predict_batch_end);
#else
  return true;
#endif
}

}  // namespace strata

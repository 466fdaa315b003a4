// Internal: what image_io.cc needs from the stb_image compiled in stb_image_impl.cc beyond
// stb's own API.
#pragma once

namespace strata::data::detail {

// Forgets the thread's last stb failure reason. stb sets a reason on most failures but not all
// (a PNG whose compressed data ends early fails without one), and a stale reason from an
// earlier file would then be reported for this one.
void clear_stbi_failure_reason();

}  // namespace strata::data::detail

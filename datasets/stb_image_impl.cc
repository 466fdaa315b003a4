// stb_image and stb_image_write compiled here, from Debian's libstb-dev headers, rather than
// linked from its prebuilt libstb.a: compiled with the library's own flags, the decoder runs
// under the sanitizers and the fuzzers see its branches (tests/fuzz/fuzz_image.cc), and
// downstream users of a static libstrata.a need no libstb at link time.
//
// Only the formats image_dataset_from_directory accepts (Keras': bmp, gif, jpeg, png) are
// compiled in; stb's other decoders (PSD, HDR, PIC, PNM, TGA) would be attack surface that no
// Strata API reads.
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_BMP
#define STBI_ONLY_GIF
// Failure reasons as phrases ("Corrupt PNG") rather than stb's terse codes, some of which are
// fragments of the file (an unknown PNG chunk's name: "", "I" or "ID" for a cut-off file).
#define STBI_FAILURE_USERMSG
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include "datasets/stb_image_impl.h"

namespace strata::data::detail {

void clear_stbi_failure_reason() { stbi__g_failure_reason = nullptr; }

}  // namespace strata::data::detail

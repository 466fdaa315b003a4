# stb_image.h for datasets/stb_image_impl.cc: Debian 12's libstb-dev ships stb_image 2.27, whose
# decoders write out of bounds on some corrupt files (found by tests/fuzz/fuzz_image). The fixes
# upstream made in 2.28 for them are applied here, at configure time, to a copy in
# <build>/patched/stb/stb_image.h, which the library compiles instead of the system header.
#
# Each fix is (name, text to find, replacement). A header that already has a fix (a newer
# Debian) is used as it is; one where neither the old text nor the fix can be found stops
# the configure, naming the fix, so that no fix is silently lost.
find_file(STB_IMAGE_HEADER stb/stb_image.h REQUIRED)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${STB_IMAGE_HEADER}
             ${CMAKE_CURRENT_LIST_FILE})
file(READ ${STB_IMAGE_HEADER} _stb_text)

function(_strata_stb_fix name old new)
  string(FIND "${_stb_text}" "${new}" already)
  if(NOT already EQUAL -1)
    return()
  endif()
  string(FIND "${_stb_text}" "${old}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${STB_IMAGE_HEADER}: cannot apply the stb_image fix '${name}' "
                        "(third_party/cmake/StbImage.cmake): its text is not there. Check whether "
                        "this stb_image version fixes it another way, then update or drop the fix")
  endif()
  string(REPLACE "${old}" "${new}" patched "${_stb_text}")
  set(_stb_text "${patched}" PARENT_SCOPE)
endfunction()

# JPEG: a DHT segment's 16 counts may sum to up to 4080 symbols; stbi__build_huffman and the
# value loop write that many entries into 256/257-entry tables (2.28: "bad DHT header").
_strata_stb_fix("JPEG Huffman table size"
  "               n += sizes[i];\n            }\n            L -= 17;"
  "               n += sizes[i];\n            }\n            if(n > 256) return stbi__err(\"bad DHT header\",\"Corrupt JPEG\"); // Loop over i < n would write past end of values!\n            L -= 17;")

# PNG: an IDAT chunk's declared length (up to 2 GiB) was allocated before stb checked that the
# data was there, so a 100-byte file made it allocate 2 GiB. Strata always decodes from memory
# (decode_image reads the file first), where the bytes left are known: a chunk longer than
# them is corrupt. (Not upstream's: 2.28 only caps a chunk at 1 GiB.)
_strata_stb_fix("PNG IDAT length checked before allocating"
  "            if ((int)(ioff + c.length) < (int)ioff) return 0;\n            if (ioff + c.length > idata_limit) {"
  "            if ((int)(ioff + c.length) < (int)ioff) return 0;\n            if (!s->io.read && c.length > (stbi__uint32)(s->img_buffer_end - s->img_buffer)) return stbi__err(\"outofdata\",\"Corrupt PNG\");\n            if (ioff + c.length > idata_limit) {")

# JPEG: a corrupt entropy-coded segment can end (at a marker) before a block's bits do; the bit
# readers then took bits that were never read, code_bits went negative, and the next refill
# shifted by 32 or more (undefined behaviour, found by fuzz_image). 2.28: they return 0s instead.
_strata_stb_fix("JPEG extend_receive out of bits"
  "   if (j->code_bits < n) stbi__grow_buffer_unsafe(j);\n\n   sgn = j->code_buffer >> 31;"
  "   if (j->code_bits < n) stbi__grow_buffer_unsafe(j);\n   if (j->code_bits < n) return 0; // ran out of bits from stream, return 0s intead of continuing\n\n   sgn = j->code_buffer >> 31;")
_strata_stb_fix("JPEG get_bits out of bits"
  "   if (j->code_bits < n) stbi__grow_buffer_unsafe(j);\n   k = stbi_lrot(j->code_buffer, n);"
  "   if (j->code_bits < n) stbi__grow_buffer_unsafe(j);\n   if (j->code_bits < n) return 0; // ran out of bits from stream, return 0s intead of continuing\n   k = stbi_lrot(j->code_buffer, n);")
_strata_stb_fix("JPEG get_bit out of bits"
  "   if (j->code_bits < 1) stbi__grow_buffer_unsafe(j);\n   k = j->code_buffer;"
  "   if (j->code_bits < 1) stbi__grow_buffer_unsafe(j);\n   if (j->code_bits < 1) return 0; // ran out of bits from stream, return 0s intead of continuing\n   k = j->code_buffer;")

set(STB_IMAGE_PATCHED_DIR ${PROJECT_BINARY_DIR}/patched)
file(WRITE ${STB_IMAGE_PATCHED_DIR}/stb/stb_image.h.new "${_stb_text}")
# Copied only when changed, so a re-configure does not recompile the decoder.
configure_file(${STB_IMAGE_PATCHED_DIR}/stb/stb_image.h.new ${STB_IMAGE_PATCHED_DIR}/stb/stb_image.h
               COPYONLY)

#!/usr/bin/env bash
# Every installed header is the public API (framework/install.cmake): each must compile alone,
# with nothing but the install prefix on the include path, and none may include a third-party
# library's header (Gloo, gRPC, protobuf or its generated code, CUDA/cuDNN/cuBLAS/NCCL, oneDNN,
# HDF5, libzip, Abseil, stb), so that a user's build needs none of them.
# Usage: compile_each_header.sh PREFIX CXX [extra compiler flags...]
set -euo pipefail
prefix=$1 cxx=$2
shift 2
include_dir=$prefix/include
cd "$include_dir"
mapfile -t headers < <(find strata -name '*.h' | sort)
echo "${#headers[@]} installed headers under $include_dir/strata"
(( ${#headers[@]} > 0 )) || { echo "no installed headers: was Strata installed into $prefix?"; exit 1; }

third_party='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](gloo/|grpc|grpcpp/|google/protobuf/|[^">]*\.pb\.h|cuda|cudnn|cublas|nccl|dnnl|oneapi/|hdf5|H5|zip\.h|absl/|stb_)'
if grep -nE "$third_party" "${headers[@]}"; then
  echo "FAIL: the installed headers above include a third-party library's header: move that"
  echo "include into a .cc file (pimpl) so users of Strata need not have the library's headers"
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export cxx include_dir work
compile_one() {
  local header=$1
  local unit=$work/$(echo "$header" | tr '/' '_').cc
  printf '#include <%s>\n#include <%s>\n' "$header" "$header" > "$unit"   # twice: #pragma once
  if ! "$cxx" -std=c++20 -fsyntax-only -Wall -Werror -I"$include_dir" -I"$include_dir/strata" \
       "${@:2}" "$unit" > "$unit.log" 2>&1; then
    echo "FAIL: <$header> does not compile alone (include what it uses):"
    head -20 "$unit.log"
    return 1
  fi
}
export -f compile_one
jobs=$(nproc)
printf '%s\n' "${headers[@]}" | xargs -P "$jobs" -I{} bash -c 'compile_one "$@"' _ {} "$@"
echo "every installed header compiles alone and includes no third-party header"

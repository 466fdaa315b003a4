#!/usr/bin/env bash
# Compiles every C++ example of the README against the installed Strata, with one include,
# <strata/strata.h>. Examples are fragments of a program: each ```cpp block must have a line
# `<!-- example: NAME -->` (invisible once rendered) above it, and readme_examples/NAME.cc says
# what the surrounding program provides (a function around the example, the variables it
# names). The test puts the example in verbatim where that file says `// @README_EXAMPLE@`;
# `#line` makes a compiler error name README.md's own line.
# Usage: readme_examples.sh README PREFIX CXX [extra compiler flags...]
set -euo pipefail
readme=$1 prefix=$2 cxx=$3
shift 3
contexts=$(cd "$(dirname "$0")" && pwd)/readme_examples
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/blocks"

# Each block to blocks/NAME (its text) and blocks/NAME.line (README's line of its first line).
awk -v out="$work/blocks" '
  /^<!-- example: [A-Za-z0-9_]+ -->$/ { name = $3; next }
  /^```cpp/ {
    if (name == "") { printf "README.md:%d: a C++ example without `<!-- example: NAME -->` above it\n", NR; bad = 1 }
    inside = 1; file = out "/" name; print NR + 1 > (file ".line"); printf "" > file; next
  }
  /^```/ && inside { inside = 0; name = ""; close(file); print file > (out "/order"); next }
  inside {
    if ($0 ~ /^[ \t]*#[ \t]*include/ && $0 !~ /^#include <strata\/strata\.h>([ \t]*\/\/.*)?$/) {
      printf "README.md:%d: examples include <strata/strata.h> only, found: %s\n", NR, $0; bad = 1
    }
    print >> file
  }
  END { exit bad }
' "$readme"

unit=$work/readme_examples.cc
echo '#include <strata/strata.h>' > "$unit"
count=0
while read -r block; do
  name=$(basename "$block")
  context=$contexts/$name.cc
  [[ -f $context ]] || { echo "README example '$name' has no context $context"; exit 1; }
  grep -q '// @README_EXAMPLE@' "$context" || { echo "$context lacks // @README_EXAMPLE@"; exit 1; }
  first=$(cat "$block.line")
  echo "namespace readme_example_$name {" >> "$unit"
  echo "#line 1 \"$context\"" >> "$unit"
  n=0
  while IFS= read -r line; do
    n=$((n + 1))
    if [[ $line == *'// @README_EXAMPLE@'* ]]; then
      echo "#line $first \"README.md\"" >> "$unit"
      sed -E 's|^#include <strata/strata.h>([ \t]*//.*)?$||' "$block" >> "$unit"   # already first
      echo "#line $((n + 1)) \"$context\"" >> "$unit"
    else
      printf '%s\n' "$line" >> "$unit"
    fi
  done < "$context"
  echo "}  // namespace readme_example_$name" >> "$unit"
  count=$((count + 1))
done < "$work/blocks/order"
echo "$count README examples"
# The include path find_package(Strata) gives (framework/CMakeLists.txt's INSTALL_INTERFACE).
"$cxx" -std=c++20 -fsyntax-only -I"$prefix/include" -I"$prefix/include/strata" "$@" "$unit"
echo "every README example compiles against $prefix with <strata/strata.h> alone"

// README's TF_CONFIG resolver: a function's body.
using namespace strata;
void example() {
  // @README_EXAMPLE@
}

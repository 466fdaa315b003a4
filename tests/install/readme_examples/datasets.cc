// README's data sets: a function's body.
using namespace strata;
void example() {
  // @README_EXAMPLE@
}

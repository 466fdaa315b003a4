// README's functional model and custom loop: a dataset of (x, y) batches from the program.
using namespace strata;
void example(data::Dataset dataset) {
  // @README_EXAMPLE@
}

// README's custom loop under MirroredStrategy: the strategy, a model factory and a dataset of
// (x, y) elements from the program.
using namespace strata;
std::shared_ptr<Sequential> build_model();
void example(distribute::MirroredStrategy& strategy, data::Dataset dataset) {
  // @README_EXAMPLE@
}

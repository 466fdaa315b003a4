// README's elastic job keeping the per-replica batch: a model factory and the data from the
// program.
using namespace strata;
std::shared_ptr<Sequential> build_model();
void example(Tensor x_train, Tensor y_train) {
  // @README_EXAMPLE@
}

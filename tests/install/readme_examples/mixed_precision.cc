// README's mixed precision: a model factory from the program.
using namespace strata;
std::shared_ptr<Sequential> make_model();
void example() {
  // @README_EXAMPLE@
}

// README's TFRecord files and tf.train.Example: an image's PNG bytes from the program.
using namespace strata;
void example(const std::string& png) {
  // @README_EXAMPLE@
}

// README's BackupAndRestore: a compiled model and its data from the program.
using namespace strata;
void example(Sequential& model, Tensor x, Tensor y) {
  // @README_EXAMPLE@
}

// README's parameter-server program: the body of main(), with a model factory and the
// training data from the program.
strata::data::Dataset make_dataset();
std::shared_ptr<strata::Model> build_model();
int main() {
  // @README_EXAMPLE@
  return 0;
}

// README's fit under ParameterServerStrategy: the model made in the strategy's scope and the
// validation and test data from the program.
void example(std::shared_ptr<strata::Model> model, strata::Tensor x_val, strata::Tensor y_val,
             strata::Tensor x_test, strata::Tensor y_test) {
  // @README_EXAMPLE@
}

// README's PreemptionCheckpointHandler: a custom loop's strategy, step function, iterator and
// checkpoint function from the program.
using namespace strata;
void save_my_checkpoint(int64_t step);
void example(distribute::MultiWorkerMirroredStrategy& strategy,
             const std::function<Tensor(const data::Element&)>& train_step,
             distribute::DistributedIterator* iterator, int64_t step, int64_t steps) {
  // @README_EXAMPLE@
}

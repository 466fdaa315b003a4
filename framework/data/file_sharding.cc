#include "framework/data/file_sharding.h"

#include <algorithm>

#include "framework/core/error.h"
#include "framework/data/dataset_ops.h"

namespace strata::data {
namespace {

// The nodes from the pipeline's end down to its file source (last), or empty when the chain of
// single inputs ends at another source. (Every node with an input copies itself onto another:
// DatasetImpl::with_input.)
std::vector<ImplPtr> chain_to_file_source(const ImplPtr& end) {
  std::vector<ImplPtr> chain;
  for (ImplPtr node = end; node;) {
    chain.push_back(node);
    if (node->source_files()) return chain;
    const DatasetImpl* input = node->input_node();
    if (!input) return {};
    node = input->shared_from_this();
  }
  return {};
}

}  // namespace

std::optional<std::vector<std::string>> pipeline_files(const Dataset& dataset) {
  const std::vector<ImplPtr> chain = chain_to_file_source(dataset.impl());
  if (chain.empty()) return std::nullopt;
  return *chain.back()->source_files();
}

std::optional<Dataset> shard_by_file(const Dataset& dataset, int64_t num_workers, int64_t index,
                                     const std::string& who) {
  if (num_workers < 1 || index < 0 || index >= num_workers) {
    throw ValueError(who + ": worker index " + std::to_string(index) + " of " +
                     std::to_string(num_workers) + " workers is out of range; expected 0 <= "
                     "index < num_workers");
  }
  const std::vector<ImplPtr> chain = chain_to_file_source(dataset.impl());
  if (chain.empty()) return std::nullopt;
  const std::vector<std::string>& files = *chain.back()->source_files();
  const int64_t count = int64_t(files.size());
  if (count < num_workers) {
    throw ValueError(who + ": sharding by file gives each of the " + std::to_string(num_workers) +
                     " workers its own files, but the dataset reads only " + std::to_string(count) +
                     " file(s), so worker " + std::to_string(count) + " onwards would read "
                     "nothing; split the data into at least " + std::to_string(num_workers) +
                     " files, or use AutoShardPolicy::kData (every worker reads everything and "
                     "keeps its part of each batch)");
  }
  std::vector<std::string> mine;
  for (int64_t f = index; f < count; f += num_workers) mine.push_back(files[size_t(f)]);

  // Rebuilt from the source up; the batch nearest the end (first in the chain) takes this
  // worker's part of the global batch.
  const auto last_batch = std::find_if(chain.begin(), chain.end() - 1, [](const ImplPtr& n) {
    return dynamic_cast<const BatchDataset*>(n.get()) != nullptr;
  });
  ImplPtr node = chain.back()->with_files(std::move(mine));
  for (auto it = chain.end() - 1; it != chain.begin();) {
    --it;
    if (it == last_batch) {
      const auto& batch = static_cast<const BatchDataset&>(**it);
      if (batch.batch_size() % num_workers != 0) {
        throw ValueError(who + ": the global batch of " + std::to_string(batch.batch_size()) +
                         " does not divide among " + std::to_string(num_workers) + " workers "
                         "(each reads its own files and makes its part of every batch); make "
                         "the batch size a multiple of " + std::to_string(num_workers));
      }
      node = std::make_shared<BatchDataset>(node, batch.batch_size() / num_workers,
                                            batch.drop_remainder());
    } else {
      node = (*it)->with_input(node);
    }
  }
  return Dataset(node);
}

}  // namespace strata::data

// GlooCommunicator: the Communicator of CPU replicas in different processes (or machines),
// over Gloo's TCP transport. The ranks meet once through a KeyValueStore (the coordination
// service; InMemoryStore when the ranks are threads of one process), connect a full mesh of TCP
// connections, then run Gloo's collectives: ring all-reduce straight on the tensor's memory.
//
//   GlooOptions options;
//   options.hostname = "10.0.0.5";             // this task's address, as its peers reach it
//   options.prefix = "gloo/generation_3";      // a fresh prefix per rendezvous generation
//   GlooCommunicator comm(coordination_client, rank, world_size, options);
//   comm.all_reduce(grad, ReduceOp::kSum);
//   auto work = comm.all_reduce_async(bucket, ReduceOp::kMean);   // overlaps with the caller
//   ...; work->wait();
//
// Every op of one communicator (sync and async) runs in the order it was issued, one at a time:
// async ops on a background thread, a sync op after the ops before it (on the caller's thread
// when none is pending, sparing two thread hand-offs). Each op carries a sequence number (#1, #2,
// ...) that its error names. As with NCCL, every rank must issue the same ops in the same order
// with tensors of the same shape and dtype: Gloo cannot check that cheaply, and a mismatch
// gives wrong values, a hang until the timeout, or a failed op, not a clear error.
//
// Failures: an op that fails or times out throws CoordinationError ("all_reduce #1532 (4194304
// bytes) did not complete within 30 s: <Gloo's message>; <which ranks never reached it>;
// <diagnose()>"). After a failure the communicator is spent: Gloo's TCP pairs are closed (its
// docs: recreate the context after an IoException), and every later op throws the first error.
// Recover by making a new communicator under a new prefix.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distribute/cluster/coordination/key_value_store.h"
#include "distribute/collectives/communicator.h"

namespace strata::distribute {

struct GlooOptions {
  // The local address peers connect to (the task's host from TF_CONFIG).
  std::string hostname = "127.0.0.1";
  // Per collective, and for the rendezvous.
  std::chrono::milliseconds timeout{60000};
  // Store key prefix: a new prefix per rendezvous generation.
  std::string prefix = "gloo";
  // "worker 1 (localhost:20001)" for error messages; null: "rank 1".
  std::function<std::string(int rank)> rank_name;
  // Asked when a collective fails or times out, to name the cause known elsewhere (e.g. the
  // coordination service's posted error: "worker 2 ... sent no heartbeat"); may return "".
  std::function<std::string()> diagnose;
  // Asked every 200 ms while the rendezvous waits for its peers' addresses: a non-empty reason
  // abandons it at once (CoordinationError carrying the reason). An elastic group's members
  // abandon a generation that a newer one replaced, and go on to that one.
  std::function<std::string()> abandon;
  // All-reduces of at most this many bytes run Gloo's BCUBE (recursive halving and doubling:
  // about 2 log2(N) steps), larger ones its ring (2(N-1) steps, each carrying 1/N of the
  // buffer). strata_allreduce_bench, one process per rank on 2 cores (2026-11-28): 4 KB in
  // 22.1 ms by the ring and 6.9 by BCUBE with 8 ranks, 63.6 and 10.4 ms with 16; 1 MB 22.3 and
  // 9.1 ms (8 ranks); 16 MB 69.9 and 76.6 ms, where the ring wins. 0: the ring always.
  size_t bcube_max_bytes = 1 << 20;
};

class GlooCommunicator final : public Communicator {
 public:
  // Connects a full mesh with the other world_size-1 ranks through `store` (a TCP device bound
  // to options.hostname; each rank publishes one address per pair, "<prefix>/pair/<from>/<to>",
  // and reads only those meant for it: O(N^2) bytes in all). CoordinationError naming the
  // ranks that did not show up within options.timeout (a peer that published its address and
  // then vanished is waited for up to 5x the timeout: Gloo's own connect wait). `store` must
  // outlive the communicator: each rank leaves its ends of the connections there
  // ("<prefix>/endpoints/<rank>"), and after a failure a note ("<prefix>/progress/<rank>"), so
  // that errors can name the ranks concerned.
  GlooCommunicator(KeyValueStore& store, int rank, int world_size, GlooOptions options = {});
  // Ops still pending are aborted (wait() on async ones first).
  ~GlooCommunicator() override;
  GlooCommunicator(const GlooCommunicator&) = delete;
  GlooCommunicator& operator=(const GlooCommunicator&) = delete;

  int rank() const override;
  int world_size() const override;

  // kSum, kMean, kMax, kMin over float32, float64, float16, bfloat16, int32 and int64 CPU
  // tensors; every rank ends bit-identical (each element is reduced once, by one rank, then
  // copied). kMean divides the sum locally (integers truncate, as in the in-process group).
  void all_reduce(Tensor& t, ReduceOp op) override;
  // Runs on the background thread, FIFO with every other op of this communicator.
  std::shared_ptr<Work> all_reduce_async(Tensor t, ReduceOp op) override;
  void broadcast(Tensor& t, int root) override;
  Tensor all_gather(const Tensor& t) override;
  // All-reduce of a copy, then this rank's part: twice the traffic of a true reduce-scatter.
  Tensor reduce_scatter(const Tensor& t, ReduceOp op) override;
  void barrier() override;

  // Makes the pending collective and every later one fail at once with a CoordinationError
  // carrying `reason` (another task died: do not wait for the timeout). Irreversible. Safe
  // from any thread. The peers see their connections to this rank close, so their pending
  // ops fail at once too.
  void abort(const std::string& reason);

  // Ops issued so far (the sequence number of the last one).
  uint64_t ops_issued() const;
  // Whether an op failed or abort() ran: every later op fails with that first error.
  bool spent() const;

  // The store keys rank `rank` of a communicator of `world_size` ranks under `prefix` leaves
  // (its pair addresses, its endpoints, its progress note): what a re-formed group erases of a
  // generation it left behind.
  static std::vector<std::string> store_keys(const std::string& prefix, int rank, int world_size);

  struct Impl;

 private:
  std::shared_ptr<Work> enqueue(std::string name, size_t bytes,
                                std::function<void(uint64_t seq)> run);
  void run_sync(std::string name, size_t bytes, std::function<void(uint64_t seq)> run);
  std::shared_ptr<Impl> impl_;
};

}  // namespace strata::distribute

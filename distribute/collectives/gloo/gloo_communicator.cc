#include "distribute/collectives/gloo/gloo_communicator.h"

#include <netinet/in.h>
#include <signal.h>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/tcp/context.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "distribute/collectives/gloo/abortable_tcp_device.h"
#include "distribute/collectives/gloo/gloo_reduce.h"
#include "distribute/collectives/gloo/gloo_store.h"
#include "distribute/collectives/gloo/rank_listen_host.h"
#include "distribute/collectives/pending_work.h"

namespace strata::distribute {
namespace {

// Gloo's way to fail every pending op of a context at once is tcp::Context::signalException:
// what an op that times out calls to wake every other op of the context (each pair takes its
// own lock, wakes its buffers with an IoException and closes its socket). It is protected, so it
// is reached through a member pointer formed in a derived class, where access allows it.
struct TcpContextAccess : gloo::transport::tcp::Context {
  static void signal_all_pairs(gloo::transport::tcp::Context& context, const std::string& msg) {
    (context.*&TcpContextAccess::signalException)(msg);
  }
};

// The store key under which rank `from` publishes the address of its end of the pair with rank
// `to`.
std::string pair_key(int from, int to) {
  return "pair/" + std::to_string(from) + "/" + std::to_string(to);
}

// Whether this end of a pair dials the other (Gloo's rule, tcp::Pair::connect: the end whose
// address compares larger connects; the other waits on its listening socket). False for
// addresses Gloo itself would refuse (its connect then says why).
bool dials(const gloo::transport::tcp::Address& self, const gloo::transport::tcp::Address& peer) {
  const sockaddr_storage& a = self.getSockaddr();
  const sockaddr_storage& b = peer.getSockaddr();
  if (a.ss_family != b.ss_family) return false;
  int rv = 0;
  if (a.ss_family == AF_INET) {
    const auto* sa = reinterpret_cast<const sockaddr_in*>(&a);
    const auto* sb = reinterpret_cast<const sockaddr_in*>(&b);
    rv = std::memcmp(&sa->sin_addr, &sb->sin_addr, sizeof(in_addr));
    if (rv == 0) rv = int(sa->sin_port) - int(sb->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* sa = reinterpret_cast<const sockaddr_in6*>(&a);
    const auto* sb = reinterpret_cast<const sockaddr_in6*>(&b);
    rv = std::memcmp(&sa->sin6_addr, &sb->sin6_addr, sizeof(in6_addr));
    if (rv == 0) rv = int(sa->sin6_port) - int(sb->sin6_port);
  }
  return rv > 0;
}

// The peers' addresses, waiting until `deadline`; with `abandon`, in slices of 200 ms, asking
// it between them whether to give up (CoordinationError with its reason).
std::vector<std::vector<char>> wait_for_peers(GlooStore& store, const std::vector<std::string>& keys,
                                              std::chrono::steady_clock::time_point deadline,
                                              const std::function<std::string()>& abandon) {
  using std::chrono::milliseconds;
  for (;;) {
    const auto left = std::max(std::chrono::duration_cast<milliseconds>(
                                   deadline - std::chrono::steady_clock::now()),
                               milliseconds(0));
    const milliseconds slice = abandon ? std::min(left, milliseconds(200)) : left;
    const auto started = std::chrono::steady_clock::now();
    try {
      return store.get_many_within(keys, slice);
    } catch (const CoordinationError&) {
      if (!abandon || slice >= left) throw;
    }
    if (const std::string why = abandon(); !why.empty()) throw CoordinationError(why);
    // A wait that failed at once (the service briefly unreachable) is not retried in a spin.
    if (std::chrono::steady_clock::now() - started < milliseconds(50)) {
      std::this_thread::sleep_for(milliseconds(50));
    }
  }
}

// While a rank's pairs connect, asks `abandon` every 200 ms; a reason fails every pair's
// connect wait at once. Why: Gloo waits up to 5x the timeout for a peer that published its
// address and then died before dialing (tcp::Pair::waitUntil), and an elastic group whose
// generation a newer one replaced must move on to that one (a worker killed while the first
// generation formed stalled the others about 330 s there).
class ConnectWatch {
 public:
  ConnectWatch(gloo::transport::tcp::Context& transport,
               const std::function<std::string()>& abandon) {
    if (!abandon) return;
    thread_ = std::thread([this, &transport, &abandon] {
      std::unique_lock<std::mutex> lock(mutex_);
      while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return done_; })) {
        lock.unlock();
        std::string why = abandon();
        lock.lock();
        if (!why.empty() && !done_) {
          reason_ = std::move(why);
          TcpContextAccess::signal_all_pairs(transport, "rendezvous abandoned: " + reason_);
          return;
        }
      }
    });
  }
  ~ConnectWatch() { stop(); }
  ConnectWatch(const ConnectWatch&) = delete;
  ConnectWatch& operator=(const ConnectWatch&) = delete;

  // Stops watching (the pairs are connected, or their connect failed); the reason the watch
  // abandoned the connect, "" when it did not.
  std::string stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    return reason_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::string reason_;
  std::thread thread_;
};

// A rendezvous context that lets abort() reach its transport context, and connects its full
// mesh with one store key per pair.
class MeshContext final : public gloo::rendezvous::Context {
 public:
  using gloo::rendezvous::Context::Context;
  gloo::transport::tcp::Context* tcp() const {
    return static_cast<gloo::transport::tcp::Context*>(transportContext_.get());
  }

  // Gloo's connectFullMesh, meeting through one key per pair: rank r publishes the address of
  // its end of each pair under pair_key(r, j) and reads only pair_key(j, r) from each peer j.
  // connectFullMesh publishes a rank's N-1 addresses under one key that every rank reads whole
  // (with a wait that fetches it first): O(N^3) bytes through the store, all of them through
  // the chief's coordination service (about 9 GB at 256 ranks). Here each address crosses the
  // store twice, O(N^2) bytes, in a few requests per rank (one set_many, a get_many or two).
  // Every read waits until `deadline`.
  void connect_pairs(GlooStore& store, const std::shared_ptr<gloo::transport::Device>& device,
                     std::chrono::steady_clock::time_point deadline,
                     const std::function<std::string()>& abandon) {
    auto transport = device->createContext(rank, size);
    transport->setTimeout(getTimeout());
    // This rank's end of every pair, published in one request; the other ends' addresses read
    // in a few (KeyValueStore::set_many / get_many), not 2(N-1) round trips through the
    // coordination service.
    std::vector<std::pair<std::string, std::vector<char>>> mine;
    std::vector<std::string> theirs;
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank) continue;
      mine.emplace_back(pair_key(rank, peer), transport->createPair(peer)->address().bytes());
      theirs.push_back(pair_key(peer, rank));
    }
    store.set_many(mine);
    const std::vector<std::vector<char>> addresses = wait_for_peers(store, theirs, deadline, abandon);
    // First the pairs this rank dials: each completes once the peer's listening socket takes
    // the connection (the peer's kernel and its device thread do that, whatever the peer's own
    // thread is doing). Then the pairs where it listens: their peers dial them in their own
    // first pass. So no rank waits on another's progress through its list, and the mesh forms
    // in about one round trip, not a wave of N rank-ordered steps (connectFullMesh's order, which
    // on a crowded machine needs every process scheduled once per step).
    std::vector<int> peers;
    std::vector<const std::vector<char>*> peer_address;
    for (int peer = 0, next = 0; peer < size; ++peer) {
      if (peer == rank) continue;
      peers.push_back(peer);
      peer_address.push_back(&addresses[size_t(next++)]);
    }
    ConnectWatch watch(static_cast<gloo::transport::tcp::Context&>(*transport), abandon);
    try {
      for (const bool dialing : {true, false}) {
        for (size_t j = 0; j < peers.size(); ++j) {
          const std::unique_ptr<gloo::transport::Pair>& pair = transport->getPair(peers[j]);
          const bool dials_peer =
              dials(gloo::transport::tcp::Address(pair->address().bytes()),
                    gloo::transport::tcp::Address(*peer_address[j]));
          if (dials_peer == dialing) pair->connect(*peer_address[j]);
        }
      }
    } catch (const std::exception&) {
      if (const std::string why = watch.stop(); !why.empty()) throw CoordinationError(why);
      throw;
    }
    // Connected, but a reason that came meanwhile has failed the pairs: the group is unusable.
    if (const std::string why = watch.stop(); !why.empty()) throw CoordinationError(why);
    device_ = device;
    transportContext_ = std::move(transport);
  }
};

std::string seconds(std::chrono::milliseconds ms) {
  char text[32];
  if (ms.count() % 1000 == 0) {
    std::snprintf(text, sizeof(text), "%lld s", static_cast<long long>(ms.count() / 1000));
  } else {
    std::snprintf(text, sizeof(text), "%.3g s", double(ms.count()) / 1000);
  }
  return text;
}

// Gloo's messages start with the source location ("[/build/gloo/transport/tcp/pair.cc:598]
// Connection closed by peer ..."): noise to a user.
std::string strip_location(const std::string& msg) {
  if (msg.size() > 1 && msg[0] == '[') {
    const size_t end = msg.find("] ");
    if (end != std::string::npos && msg.find(':') < end) return msg.substr(end + 2);
  }
  return msg;
}

bool is_timeout(const std::string& msg) {
  return msg.find("Timed out") != std::string::npos || msg.find("timeout") != std::string::npos;
}

void check_tensor(const Tensor& t, const char* what) {
  if (!t.defined()) throw ValueError(std::string(what) + ": the tensor is undefined");
  if (t.device().type != DeviceType::kCPU) {
    throw ValueError(std::string(what) + ": GlooCommunicator handles CPU tensors; got one on " +
                     t.device().to_string() + " (copy it to the CPU, or use NCCL for GPUs)");
  }
}

// One op on the background thread; also the caller's handle to it.
class Task final : public PendingWork {
 public:
  Task(std::string name, size_t bytes, std::function<void(uint64_t seq)> run)
      : name(std::move(name)), bytes(bytes), run(std::move(run)) {}

  void finish(std::exception_ptr error) {
    run = nullptr;  // releases the tensors the op captured
    complete(std::move(error));
  }
  // "all_reduce #12 (4096 bytes)"
  std::string head() const {
    return name + " #" + std::to_string(seq) + " (" + std::to_string(bytes) + " bytes)";
  }

  const std::string name;
  const size_t bytes;
  uint64_t seq = 0;
  std::function<void(uint64_t seq)> run;  // gets `seq`: the op's tag, the same on every rank
};

}  // namespace

struct GlooCommunicator::Impl {
  Impl(KeyValueStore& store, int rank, int world, GlooOptions options)
      : store(store), rank(rank), world(world), options(std::move(options)) {}

  KeyValueStore& store;
  const int rank;
  const int world;
  const GlooOptions options;
  std::shared_ptr<MeshContext> context;  // null when world == 1
  // The unbound buffers of `context`'s collectives, for abort() (abortable_tcp_device.h).
  const std::shared_ptr<UnboundBufferRegistry> buffers = std::make_shared<UnboundBufferRegistry>();
  std::vector<std::string> peer_address;  // Gloo's spelling of each peer's address, by rank

  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Task>> queue;
  bool running = false;   // an op is running (on the worker, or a sync one on its caller)
  bool stopping = false;
  uint64_t issued = 0;
  std::string first_error;  // set once: the communicator is spent
  bool aborted = false;
  std::string abort_reason;
  std::thread worker;

  std::string rank_name(int r) const {
    if (options.rank_name) return options.rank_name(r);
    return "rank " + std::to_string(r);
  }
  std::string diagnosis() const {
    if (!options.diagnose) return "";
    try {
      return options.diagnose();
    } catch (const std::exception& e) {
      return std::string("(diagnose() failed: ") + e.what() + ")";
    }
  }
  std::string progress_key(int r) const {
    return options.prefix + "/progress/" + std::to_string(r);
  }

  // The background thread: runs queued ops in issue order, one at a time.
  void work() {
    for (;;) {
      std::shared_ptr<Task> task;
      std::string spent;
      {
        std::unique_lock<std::mutex> lock(mutex);
        // `running` may be a sync op on its caller's thread (run_now): wait for it.
        cv.wait(lock, [&] { return stopping || (!queue.empty() && !running); });
        if (queue.empty()) return;
        task = std::move(queue.front());
        queue.pop_front();
        running = true;
        spent = first_error;
      }
      std::exception_ptr error = execute(*task, spent);
      {
        std::lock_guard<std::mutex> lock(mutex);
        running = false;
      }
      cv.notify_all();
      task->finish(std::move(error));
    }
  }

  // Runs `task` (unless the communicator is `spent`); its error, as a CoordinationError.
  std::exception_ptr execute(Task& task, const std::string& spent) {
    if (!spent.empty()) return std::make_exception_ptr(CoordinationError(spent));
    try {
      task.run(task.seq);
    } catch (const std::exception& e) {
      return std::make_exception_ptr(CoordinationError(failure(task, e.what())));
    }
    return nullptr;
  }

  // A sync op: on the caller's thread when nothing is queued or running (the same order, minus
  // two thread hand-offs per op, which cost up to a scheduler slice on a busy machine);
  // otherwise queued behind the others, the caller waiting.
  void run_sync(std::shared_ptr<Task> task) {
    std::unique_lock<std::mutex> lock(mutex);
    if (!queue.empty() || running || !first_error.empty()) {
      lock.unlock();
      enqueue(task);
      task->wait();
      return;
    }
    task->seq = ++issued;
    running = true;
    lock.unlock();
    std::exception_ptr error = execute(*task, "");
    lock.lock();
    running = false;
    lock.unlock();
    cv.notify_all();  // async ops issued meanwhile (from other threads) may start
    task->finish(error);
    if (error) std::rethrow_exception(error);
  }

  // Queues `task` for the background thread (or fails it at once when the communicator is spent).
  void enqueue(const std::shared_ptr<Task>& task) {
    std::string spent;
    {
      std::lock_guard<std::mutex> lock(mutex);
      task->seq = ++issued;
      spent = first_error;
      if (spent.empty()) queue.push_back(task);
    }
    if (!spent.empty()) {
      task->finish(std::make_exception_ptr(CoordinationError(spent)));
    } else {
      cv.notify_all();
    }
  }

  // The message of an op that failed with Gloo's `what`; makes the communicator spent.
  std::string failure(const Task& task, const std::string& what) {
    bool was_aborted;
    std::string reason;
    {
      std::lock_guard<std::mutex> lock(mutex);
      was_aborted = aborted;
      reason = abort_reason;
    }
    std::string text;
    if (was_aborted) {
      text = task.head() + " was aborted: " + reason;
      try {  // tells the peers, whose ops now fail on closed connections, why
        store.set(progress_key(rank), std::to_string(task.seq) + " aborted: " + reason);
      } catch (const std::exception&) {
      }
    } else {
      const std::string msg = strip_location(what);
      text = task.head() +
             (is_timeout(msg) ? " did not complete within " + seconds(options.timeout) : " failed") +
             ": " + name_peers(msg);
      const std::string absent = absent_ranks(task);
      if (!absent.empty()) text += "; " + absent;
      const std::string cause = diagnosis();
      if (!cause.empty()) text += "; " + cause;
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (first_error.empty()) first_error = text;
    return text;
  }

  // Gloo's TCP errors name the peer's address ("Connection closed by peer [10.0.0.7]:4711"):
  // each is followed by the rank behind it. A connection this rank dialled names the address
  // the peer published; one it accepted names the peer's own end, which each rank published
  // after connecting (read here, on the failure path only).
  std::string name_peers(std::string msg) const {
    std::vector<std::pair<std::string, int>> known;
    for (int r = 0; r < world; ++r) {
      if (r == rank) continue;
      if (!peer_address[size_t(r)].empty()) known.emplace_back(peer_address[size_t(r)], r);
      try {
        const std::optional<std::string> ends = store.try_get(endpoints_key(r));
        const std::string mine = std::to_string(rank) + " ";
        for (size_t at = 0; ends && at < ends->size();) {
          size_t eol = ends->find('\n', at);
          if (eol == std::string::npos) eol = ends->size();
          if (ends->compare(at, mine.size(), mine) == 0) {
            known.emplace_back(ends->substr(at + mine.size(), eol - at - mine.size()), r);
          }
          at = eol + 1;
        }
      } catch (const std::exception&) {
      }
    }
    for (const auto& [address, r] : known) {
      for (size_t at = msg.find(address); at != std::string::npos;
           at = msg.find(address, at + 1)) {
        const size_t end = at + address.size();
        if (end < msg.size() && std::isdigit(static_cast<unsigned char>(msg[end]))) continue;
        const std::string name = " (" + rank_name(r) + ")";
        if (msg.compare(end, name.size(), name) == 0) continue;
        msg.insert(end, name);
      }
    }
    return msg;
  }
  std::string endpoints_key(int r) const {
    return options.prefix + "/endpoints/" + std::to_string(r);
  }

  // Which ranks never reached `task`. Gloo cannot say (a ring waits on its neighbour, which may
  // wait on the absent rank; the first rank to time out closes its connections, so the others
  // see "connection closed" instead), so each failing rank leaves a note in the store and reads
  // the others', waiting up to a second for ranks that fail at about the same time. Only
  // failures pay for this.
  std::string absent_ranks(const Task& task) {
    if (world == 1) return "";
    try {
      store.set(progress_key(rank), std::to_string(task.seq) + " " + task.name);
    } catch (const std::exception&) {
      return "";  // the store is gone too: nothing to learn there
    }
    const auto grace = std::min(options.timeout, std::chrono::milliseconds(1000));
    const auto deadline = std::chrono::steady_clock::now() + grace;
    std::vector<std::string> absent, aborted_by;
    for (int r = 0; r < world; ++r) {
      if (r == rank) continue;
      std::string note;
      try {
        const auto left = std::max(std::chrono::milliseconds(0),
                                   std::chrono::duration_cast<std::chrono::milliseconds>(
                                       deadline - std::chrono::steady_clock::now()));
        auto now = store.try_get(progress_key(r));
        note = now ? *now : store.get(progress_key(r), left);
      } catch (const std::exception&) {
        absent.push_back(rank_name(r) + " (no sign of it: gone, or stuck before this op)");
        continue;
      }
      const uint64_t seq = std::strtoull(note.c_str(), nullptr, 10);
      const size_t space = note.find(' ');
      const std::string what = space == std::string::npos ? "op" : note.substr(space + 1);
      if (what.rfind("aborted: ", 0) == 0) {
        aborted_by.push_back(rank_name(r) + " aborted its communicator: " + what.substr(9));
      } else if (seq < task.seq) {
        absent.push_back(rank_name(r) + " (still in " + what + " #" + std::to_string(seq) + ")");
      }
    }
    std::string text;
    for (const std::string& a : aborted_by) text += (text.empty() ? "" : "; ") + a;
    if (!absent.empty()) {
      text += std::string(text.empty() ? "" : "; ") + "not reached by ";
      for (size_t i = 0; i < absent.size(); ++i) text += (i ? ", " : "") + absent[i];
    }
    return text;
  }
};

namespace {

// The ranks that have not published the address of their end of the pair with this rank.
std::string missing_ranks(GlooStore& store, const GlooCommunicator::Impl& impl) {
  std::string names;
  for (int r = 0; r < impl.world; ++r) {
    if (r == impl.rank) continue;
    bool present = false;
    try {
      present = store.is_set(pair_key(r, impl.rank));
    } catch (const std::exception&) {
    }
    if (!present) names += (names.empty() ? "" : ", ") + impl.rank_name(r);
  }
  return names;
}

}  // namespace

GlooCommunicator::GlooCommunicator(KeyValueStore& store, int rank, int world_size,
                                   GlooOptions options) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw ValueError("GlooCommunicator: rank " + std::to_string(rank) + " of world_size " +
                     std::to_string(world_size) + " is out of range");
  }
  if (options.timeout.count() <= 0) throw ValueError("GlooOptions::timeout must be positive");
  // Gloo's TCP transport writes with writev: a peer that died would raise SIGPIPE, whose
  // default action ends this process silently instead of failing the collective with a message.
  // Ignored, as PyTorch's c10d does, unless the program installed a handler of its own.
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    signal(SIGPIPE, SIG_IGN);
  }
  impl_ = std::make_shared<Impl>(store, rank, world_size, std::move(options));
  Impl& impl = *impl_;
  impl.peer_address.resize(size_t(world_size));
  if (world_size > 1) {
    GlooStore gloo_store(store, impl.options.prefix, impl.options.timeout);
    std::shared_ptr<gloo::transport::Device> device;
    try {
      gloo::transport::tcp::attr attr;
      attr.hostname = rank_listen_host(impl.options.hostname, rank);
      device = create_abortable_tcp_device(attr, impl.buffers);
    } catch (const std::exception& e) {
      throw CoordinationError("GlooCommunicator: cannot listen on '" + impl.options.hostname +
                              "' (GlooOptions::hostname must be an address of this machine): " +
                              strip_location(e.what()));
    }
    impl.context = std::make_shared<MeshContext>(rank, world_size);
    impl.context->setTimeout(impl.options.timeout);
    try {
      impl.context->connect_pairs(gloo_store, device,
                                  std::chrono::steady_clock::now() + impl.options.timeout,
                                  impl.options.abandon);
    } catch (const std::exception& e) {
      const std::string what = strip_location(e.what());
      const std::string missing = missing_ranks(gloo_store, impl);
      std::string text = "Gloo rendezvous of " +
                         (impl.options.rank_name ? impl.rank_name(rank) + ", rank " : "rank ") +
                         std::to_string(rank) + " of " + std::to_string(world_size) +
                         " (store prefix '" + impl.options.prefix + "'), ";
      text += missing.empty() && !is_timeout(what)
                  ? "failed: "
                  : "did not complete within " + seconds(impl.options.timeout) + ": ";
      text += missing.empty() ? "every rank published its address, but connecting failed"
                              : missing + " did not show up";
      text += " (" + what + ")";
      const std::string cause = impl.diagnosis();
      if (!cause.empty()) text += "; " + cause;
      throw CoordinationError(text);
    }
    std::string endpoints;  // "<peer> <this rank's end of the connection to it>" lines
    for (int r = 0; r < world_size; ++r) {
      if (r == rank) continue;
      if (auto bytes = gloo_store.fetched(pair_key(r, rank))) {
        impl.peer_address[size_t(r)] = gloo::transport::tcp::Address(*bytes).str();
      }
      endpoints += std::to_string(r) + " " + impl.context->getPair(r)->address().str() + "\n";
    }
    try {
      store.set(impl.endpoints_key(rank), endpoints);
    } catch (const std::exception&) {  // only error messages would miss it
    }
  }
  impl.worker = std::thread([&impl] { impl.work(); });
}

GlooCommunicator::~GlooCommunicator() {
  bool busy;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
    busy = impl_->running || !impl_->queue.empty();
  }
  // Ops still pending would otherwise keep the destructor waiting on peers (up to the timeout).
  if (busy) abort("the GlooCommunicator was destroyed with collectives pending");
  impl_->cv.notify_all();
  impl_->worker.join();
}

int GlooCommunicator::rank() const { return impl_->rank; }
int GlooCommunicator::world_size() const { return impl_->world; }

uint64_t GlooCommunicator::ops_issued() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->issued;
}

bool GlooCommunicator::spent() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return !impl_->first_error.empty();
}

std::shared_ptr<Work> GlooCommunicator::enqueue(std::string name, size_t bytes,
                                                std::function<void(uint64_t seq)> run) {
  auto task = std::make_shared<Task>(std::move(name), bytes, std::move(run));
  impl_->enqueue(task);
  return task;
}

void GlooCommunicator::run_sync(std::string name, size_t bytes,
                                std::function<void(uint64_t seq)> run) {
  impl_->run_sync(std::make_shared<Task>(std::move(name), bytes, std::move(run)));
}

void GlooCommunicator::abort(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (impl_->aborted) return;
    impl_->aborted = true;
    impl_->abort_reason = reason;
    if (impl_->first_error.empty()) {
      impl_->first_error = "GlooCommunicator (" + impl_->rank_name(impl_->rank) +
                           ") was aborted: " + reason;
    }
  }
  // Wakes the op waiting on a peer (its buffers get an IoException) and closes every
  // connection, so the peers' pending ops fail at once too.
  if (impl_->context) TcpContextAccess::signal_all_pairs(*impl_->context->tcp(), "aborted: " + reason);
  // ...all but a send parked after its peer had gone, which only its buffer can be told of.
  impl_->buffers->fail_all(std::make_exception_ptr(gloo::IoException("aborted: " + reason)));
}

namespace {

// Gloo sizes a buffer by its element type; only the element's size matters to it (the reduce
// function knows the type), so one unsigned type per size stands in for every dtype.
void set_output(gloo::AllreduceOptions& opts, void* data, size_t bytes, size_t element_size) {
  switch (element_size) {
    case 2: opts.setOutput(static_cast<uint16_t*>(data), bytes / 2); break;
    case 4: opts.setOutput(static_cast<uint32_t*>(data), bytes / 4); break;
    default: opts.setOutput(static_cast<uint64_t*>(data), bytes / 8); break;
  }
}

// In place on `data`, straight on the tensor's memory (no staging copy): Gloo's ring
// all-reduce (what PyTorch's ProcessGroupGloo runs) for large buffers, its BCUBE for those of at
// most `bcube_max_bytes`, where the ring's 2(N-1) sequential hops cost more than the bytes.
// Either way each element is reduced once, by one rank, then copied to the others, so every
// rank ends bit-identical.
void run_all_reduce(const std::shared_ptr<gloo::Context>& context, uint64_t seq,
                    std::chrono::milliseconds timeout, void* data, size_t bytes,
                    const ReduceKernel& kernel, int world, size_t bcube_max_bytes) {
  if (bytes == 0) return;
  if (world > 1) {
    gloo::AllreduceOptions opts(context);
    set_output(opts, data, bytes, kernel.element_size);
    opts.setReduceFunction(kernel.reduce);
    opts.setTag(uint32_t(seq));
    opts.setTimeout(timeout);
    opts.setAlgorithm(bytes <= bcube_max_bytes ? gloo::AllreduceOptions::Algorithm::BCUBE
                                               : gloo::AllreduceOptions::Algorithm::RING);
    gloo::allreduce(opts);
  }
  if (kernel.divide) kernel.divide(data, bytes / kernel.element_size, world);
}

}  // namespace

void GlooCommunicator::all_reduce(Tensor& t, ReduceOp op) {
  check_tensor(t, "all_reduce");
  const ReduceKernel kernel = reduce_kernel(t.dtype(), op, "all_reduce");
  Impl* impl = impl_.get();
  run_sync("all_reduce", t.nbytes(), [impl, &t, kernel](uint64_t seq) {
    run_all_reduce(impl->context, seq, impl->options.timeout, t.raw_data(), t.nbytes(), kernel,
                   impl->world, impl->options.bcube_max_bytes);
  });
}

std::shared_ptr<Work> GlooCommunicator::all_reduce_async(Tensor t, ReduceOp op) {
  check_tensor(t, "all_reduce");
  const ReduceKernel kernel = reduce_kernel(t.dtype(), op, "all_reduce");
  Impl* impl = impl_.get();
  return enqueue("all_reduce", t.nbytes(), [impl, t, kernel](uint64_t seq) {
    run_all_reduce(impl->context, seq, impl->options.timeout, t.raw_data(), t.nbytes(), kernel,
                   impl->world, impl->options.bcube_max_bytes);
  });
}

void GlooCommunicator::broadcast(Tensor& t, int root) {
  check_tensor(t, "broadcast");
  if (root < 0 || root >= impl_->world) {
    throw ValueError("broadcast: root " + std::to_string(root) + " is not a rank of this group (" +
                     std::to_string(impl_->world) + " ranks)");
  }
  Impl* impl = impl_.get();
  run_sync("broadcast", t.nbytes(), [impl, t, root](uint64_t seq) {
    if (impl->world == 1 || t.nbytes() == 0) return;
    gloo::BroadcastOptions opts(impl->context);
    opts.setOutput(static_cast<uint8_t*>(t.raw_data()), t.nbytes());  // in place on every rank
    opts.setRoot(root);
    opts.setTag(uint32_t(seq));
    opts.setTimeout(impl->options.timeout);
    gloo::broadcast(opts);
  });
}

Tensor GlooCommunicator::all_gather(const Tensor& t) {
  check_tensor(t, "all_gather");
  if (t.shape().rank() == 0) {
    throw ShapeError("all_gather: needs a tensor of rank >= 1 (gathered along axis 0)");
  }
  std::vector<int64_t> dims = t.shape().dims();
  dims[0] *= impl_->world;
  Tensor out = Tensor::empty(Shape(dims), t.dtype(), t.device());
  Impl* impl = impl_.get();
  run_sync("all_gather", t.nbytes(), [impl, t, out](uint64_t seq) {
    if (t.nbytes() == 0) return;
    if (impl->world == 1) {
      std::memcpy(out.raw_data(), t.raw_data(), t.nbytes());
      return;
    }
    gloo::AllgatherOptions opts(impl->context);
    opts.setInput(static_cast<uint8_t*>(t.raw_data()), t.nbytes());
    opts.setOutput(static_cast<uint8_t*>(out.raw_data()), out.nbytes());
    opts.setTag(uint32_t(seq));
    opts.setTimeout(impl->options.timeout);
    gloo::allgather(opts);
  });
  return out;
}

Tensor GlooCommunicator::reduce_scatter(const Tensor& t, ReduceOp op) {
  check_tensor(t, "reduce_scatter");
  const int world = impl_->world;
  if (t.shape().rank() == 0 || t.dim(0) % world != 0) {
    throw ShapeError("reduce_scatter: axis 0 of " + t.shape().to_string() +
                     " must divide into " + std::to_string(world) + " equal parts");
  }
  const ReduceKernel kernel = reduce_kernel(t.dtype(), op, "reduce_scatter");
  // Gloo 0.5 has no reduce-scatter on unbound buffers (only the old bound-buffer
  // ReduceScatterHalvingDoubling): all-reduce a copy and keep this rank's rows.
  Tensor sum = t.clone();
  Impl* impl = impl_.get();
  run_sync("reduce_scatter", t.nbytes(), [impl, sum, kernel](uint64_t seq) {
    run_all_reduce(impl->context, seq, impl->options.timeout, sum.raw_data(), sum.nbytes(),
                   kernel, impl->world, impl->options.bcube_max_bytes);
  });
  const int64_t part = t.dim(0) / world;
  return sum.slice(part * impl_->rank, part * (impl_->rank + 1)).clone();
}

void GlooCommunicator::barrier() {
  Impl* impl = impl_.get();
  run_sync("barrier", 0, [impl](uint64_t seq) {
    if (impl->world == 1) return;
    gloo::BarrierOptions opts(impl->context);
    opts.setTag(uint32_t(seq));
    opts.setTimeout(impl->options.timeout);
    gloo::barrier(opts);
  });
}

std::vector<std::string> GlooCommunicator::store_keys(const std::string& prefix, int rank,
                                                     int world_size) {
  std::vector<std::string> keys;
  for (int to = 0; to < world_size; ++to) {
    if (to != rank) keys.push_back(prefix + "/" + pair_key(rank, to));
  }
  keys.push_back(prefix + "/endpoints/" + std::to_string(rank));
  keys.push_back(prefix + "/progress/" + std::to_string(rank));
  return keys;
}

}  // namespace strata::distribute

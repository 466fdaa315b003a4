// NcclCommGuard (distribute/collectives/nccl_comm_guard.h): abort() on one thread while another is
// inside a collective on the same NCCL communicator, or awaiting its outcome, must never let a call
// reach the communicator after ncclCommAbort freed it, and the collective must fail naming the
// abort's reason. NCCL is replaced by fakes behind the guard's call table (the seam the real,
// lazily loaded libnccl sits behind): they count calls, can block, mark a communicator freed by
// ncclCommAbort / ncclCommDestroy, and record a violation for any later call on it, or for an
// abort while another call is inside the same communicator. No GPU needed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "distribute/collectives/communicator.h"
#include "distribute/collectives/nccl_comm_guard.h"
#include "support/test_helpers.h"

// The fakes' communicator (NCCL's is opaque: nccl.h only declares struct ncclComm).
struct ncclComm {
  int serial;
};

namespace strata::distribute {
namespace {

using namespace std::chrono_literals;

constexpr int kRemoteError = 6;  // ncclRemoteError
// Bounds the fakes' and the tests' waits, so a bug fails the test instead of hanging it.
constexpr auto kBound = 30s;

// The fake NCCL's state: global, since the call table holds plain function pointers.
struct FakeNccl {
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, int> calls;          // per function name
  std::set<const ncclComm*> freed;           // by ncclCommAbort / ncclCommDestroy
  std::map<const ncclComm*, int> inside;     // calls in progress, per communicator
  std::vector<std::string> violations;       // uses of freed communicators, unsafe aborts
  int async_state = kNcclInProgress;         // what ncclCommGetAsyncError reports
  int in_progress_polls = -1;                // >= 0: that many polls say in progress, then success
  int enqueue_status = kNcclInProgress;      // what the fake collective returns
  bool block_enqueue = false;                // the fake collective waits for release_enqueue
  bool release_enqueue = false;

  void reset() {
    std::lock_guard<std::mutex> lock(mutex);
    calls.clear();
    freed.clear();
    inside.clear();
    violations.clear();
    async_state = kNcclInProgress;
    in_progress_polls = -1;
    enqueue_status = kNcclInProgress;
    block_enqueue = release_enqueue = false;
  }

  // Every fake call starts here (with `mutex` held).
  void enter(const std::string& name, const ncclComm* comm) {
    ++calls[name];
    if (comm != nullptr && freed.count(comm) != 0) {
      violations.push_back(name + " on communicator " + std::to_string(comm->serial) +
                           " after it was freed");
    }
    ++inside[comm];
    changed.notify_all();
  }
  void leave(const ncclComm* comm) {
    --inside[comm];
    changed.notify_all();
  }
  void free_comm(const std::string& name, const ncclComm* comm) {
    // NCCL frees the communicator at once: a call still inside it would read freed memory.
    if (inside[comm] > 1) {
      violations.push_back(name + " on communicator " + std::to_string(comm->serial) +
                           " while another call was inside it");
    }
    freed.insert(comm);
  }
  int count(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex);
    return calls[name];
  }
  // Waits (bounded) until `ready` holds; false on the bound.
  template <typename Pred>
  bool wait_for(Pred ready) {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, kBound, ready);
  }
};

FakeNccl fake;

int fake_get_async_error(ncclComm* comm, int* state) {
  std::lock_guard<std::mutex> lock(fake.mutex);
  fake.enter("ncclCommGetAsyncError", comm);
  if (fake.in_progress_polls >= 0) {
    *state = fake.in_progress_polls > 0 ? kNcclInProgress : kNcclSuccess;
    if (fake.in_progress_polls > 0) --fake.in_progress_polls;
  } else {
    *state = fake.async_state;
  }
  fake.leave(comm);
  return kNcclSuccess;
}

int fake_abort(ncclComm* comm) {
  std::lock_guard<std::mutex> lock(fake.mutex);
  fake.enter("ncclCommAbort", comm);
  fake.free_comm("ncclCommAbort", comm);
  fake.leave(comm);
  return kNcclSuccess;
}

int fake_finalize(ncclComm* comm) {
  std::lock_guard<std::mutex> lock(fake.mutex);
  fake.enter("ncclCommFinalize", comm);
  fake.leave(comm);
  return kNcclInProgress;  // nonblocking: quiescent later, per ncclCommGetAsyncError
}

int fake_destroy(ncclComm* comm) {
  std::lock_guard<std::mutex> lock(fake.mutex);
  fake.enter("ncclCommDestroy", comm);
  fake.free_comm("ncclCommDestroy", comm);
  fake.leave(comm);
  return kNcclSuccess;
}

const char* fake_last_error(ncclComm* comm) {
  std::lock_guard<std::mutex> lock(fake.mutex);
  fake.enter("ncclGetLastError", comm);
  fake.leave(comm);
  return "socket closed by peer 10.0.0.2";
}

const char* fake_error_string(int status) {
  return status == kRemoteError ? "remote process exited or there was a network error"
                                : "some NCCL error";
}

// The collective (ncclAllReduce's part that reaches the communicator).
int fake_all_reduce(ncclComm* comm) {
  std::unique_lock<std::mutex> lock(fake.mutex);
  fake.enter("ncclAllReduce", comm);
  if (fake.block_enqueue) {
    if (!fake.changed.wait_for(lock, kBound, [] { return fake.release_enqueue; })) {
      fake.violations.push_back("the blocked ncclAllReduce was never released");
    }
  }
  fake.leave(comm);
  return fake.enqueue_status;
}

const NcclCommCalls kFakeCalls{fake_get_async_error, fake_abort,      fake_finalize,
                               fake_destroy,         fake_last_error, fake_error_string};

class NcclCommGuardTest : public ::testing::Test {
 protected:
  void SetUp() override { fake.reset(); }
  void TearDown() override {
    std::lock_guard<std::mutex> lock(fake.mutex);
    EXPECT_TRUE(fake.violations.empty()) << fake.violations.front();
  }

  // Runs one all-reduce through `guard` on a thread; its error, if any, lands in *error.
  std::thread all_reduce_on_thread(NcclCommGuard& guard, std::string* error) {
    return std::thread([&guard, error] {
      try {
        guard.run("ncclAllReduce", fake_all_reduce, "check the other workers");
      } catch (const CollectiveError& e) {
        *error = e.what();
      }
    });
  }

  ncclComm comm_{1};
};

TEST_F(NcclCommGuardTest, AbortWhileAwaitingACollectiveFailsItNamingTheReason) {
  // The collective is enqueued (ncclInProgress) and its outcome never comes: a peer is gone. The
  // abort lands wherever the replica's polling has got to; rounds of it make an unguarded poll
  // after the free (the race this guards against) all but certain to show.
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    fake.reset();
    ncclComm comm{100 + round};
    NcclCommGuard guard(kFakeCalls, "rank 0 of 2 on /gpu:0");
    ASSERT_TRUE(guard.publish(&comm));
    std::string error;
    std::thread replica = all_reduce_on_thread(guard, &error);
    // The replica polls ncclCommGetAsyncError...
    ASSERT_TRUE(fake.wait_for([] { return fake.calls["ncclCommGetAsyncError"] >= 3; }));
    // ...when the heartbeat thread aborts.
    EXPECT_TRUE(guard.abort("worker 1 (localhost:2223) missed its heartbeats"));
    replica.join();
    testing::expect_error<CollectiveError>(
        [&] { throw CollectiveError(error); },
        {"ncclAllReduce", "rank 0 of 2 on /gpu:0", "aborted",
         "worker 1 (localhost:2223) missed its heartbeats"});
    EXPECT_EQ(fake.count("ncclCommAbort"), 1);
    EXPECT_EQ(fake.count("ncclAllReduce"), 1);
    EXPECT_TRUE(guard.closed());
    EXPECT_FALSE(guard.live());
    {
      std::lock_guard<std::mutex> lock(fake.mutex);
      ASSERT_TRUE(fake.violations.empty()) << fake.violations.front();
    }

    // Later collectives fail the same way without reaching NCCL; a second abort does nothing.
    const int polls = fake.count("ncclCommGetAsyncError");
    testing::expect_error<CollectiveError>(
        [&] { guard.run("ncclBroadcast", fake_all_reduce); },
        {"ncclBroadcast", "worker 1 (localhost:2223) missed its heartbeats"});
    EXPECT_FALSE(guard.abort("a second reason"));
    EXPECT_EQ(guard.reason(), "worker 1 (localhost:2223) missed its heartbeats");
    EXPECT_EQ(fake.count("ncclAllReduce"), 1);
    EXPECT_EQ(fake.count("ncclCommAbort"), 1);
    EXPECT_EQ(fake.count("ncclCommGetAsyncError"), polls);
  }
}

TEST_F(NcclCommGuardTest, AbortDuringAnEnqueueWaitsForItThenEndsTheCollective) {
  // The replica is inside the collective's NCCL call itself when the abort comes. On a
  // nonblocking communicator that call returns at once; the fake holds it until released, so
  // that the abort surely arrives while it is inside.
  {
    std::lock_guard<std::mutex> lock(fake.mutex);
    fake.block_enqueue = true;
  }
  NcclCommGuard guard(kFakeCalls, "rank 1 of 2 on /gpu:1");
  ASSERT_TRUE(guard.publish(&comm_));
  std::string error;
  std::thread replica = all_reduce_on_thread(guard, &error);
  ASSERT_TRUE(fake.wait_for([&] { return fake.inside[&comm_] > 0; }));
  std::atomic<bool> abort_started{false};
  std::thread heartbeat([&] {
    abort_started = true;
    guard.abort("worker 0 failed");
  });
  while (!abort_started) std::this_thread::yield();
  // Gives the abort time to reach the guard while the call is inside (which a guard that lets
  // ncclCommAbort in there fails, through the fake's violation); the checks below hold for
  // every interleaving.
  std::this_thread::sleep_for(50ms);
  {
    std::lock_guard<std::mutex> lock(fake.mutex);
    fake.release_enqueue = true;
    fake.changed.notify_all();
  }
  heartbeat.join();
  replica.join();
  EXPECT_NE(error.find("worker 0 failed"), std::string::npos) << error;
  EXPECT_NE(error.find("ncclAllReduce"), std::string::npos) << error;
  EXPECT_EQ(fake.count("ncclCommAbort"), 1);
}

TEST_F(NcclCommGuardTest, ManyCollectivesRacingAnAbortNeverTouchTheFreedCommunicator) {
  // Replica threads run collectives back to back, each settling after a few polls, and the
  // abort lands at whatever point each of them has reached.
  {
    std::lock_guard<std::mutex> lock(fake.mutex);
    fake.in_progress_polls = 1 << 30;  // reset per collective below
  }
  NcclCommGuard guard(kFakeCalls, "rank 0 of 1 on /gpu:0");
  ASSERT_TRUE(guard.publish(&comm_));
  std::atomic<int> completed{0};
  std::vector<std::string> errors(4);
  std::vector<std::thread> replicas;
  for (size_t i = 0; i < errors.size(); ++i) {
    replicas.emplace_back([&, i] {
      try {
        for (;;) {
          guard.run("ncclAllReduce", [](ncclComm* c) {
            {
              std::lock_guard<std::mutex> lock(fake.mutex);
              fake.in_progress_polls = 2;
            }
            return fake_all_reduce(c);
          });
          ++completed;
        }
      } catch (const CollectiveError& e) {
        errors[i] = e.what();
      }
    });
  }
  ASSERT_TRUE(fake.wait_for([&] { return completed.load() >= 50; }));
  EXPECT_TRUE(guard.abort("the chief stopped the job"));
  for (auto& t : replicas) t.join();
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("the chief stopped the job"), std::string::npos) << e;
  }
  EXPECT_EQ(fake.count("ncclCommAbort"), 1);
}

TEST_F(NcclCommGuardTest, AbortBeforePublishAbortsTheCommunicatorThereAndNothingUsesIt) {
  // The set-up was still connecting when the abort came: the guard had no communicator yet.
  NcclCommGuard guard(kFakeCalls, "rank 0 of 2 on /gpu:0");
  EXPECT_TRUE(guard.abort("worker 1 never came"));
  EXPECT_EQ(fake.count("ncclCommAbort"), 0);
  EXPECT_FALSE(guard.publish(&comm_));
  EXPECT_EQ(fake.count("ncclCommAbort"), 1);
  testing::expect_error<CollectiveError>([&] { guard.run("ncclAllReduce", fake_all_reduce); },
                                         {"ncclAllReduce", "worker 1 never came"});
  EXPECT_EQ(fake.count("ncclAllReduce"), 0);
  EXPECT_FALSE(guard.begin_shutdown("destroyed"));
  EXPECT_EQ(fake.count("ncclCommFinalize"), 0);
}

TEST_F(NcclCommGuardTest, NcclFailureNamesNcclsTextItsLastErrorAndTheFix) {
  {
    std::lock_guard<std::mutex> lock(fake.mutex);
    fake.async_state = kRemoteError;
  }
  NcclCommGuard guard(kFakeCalls, "rank 3 of 4 on /gpu:1");
  ASSERT_TRUE(guard.publish(&comm_));
  testing::expect_error<CollectiveError>(
      [&] { guard.run("ncclAllReduce", fake_all_reduce, "check the other workers"); },
      {"NCCL error in ncclAllReduce on rank 3 of 4 on /gpu:1",
       "remote process exited or there was a network error", "socket closed by peer 10.0.0.2",
       "check the other workers"});
  // An enqueue that fails at once is reported the same way.
  {
    std::lock_guard<std::mutex> lock(fake.mutex);
    fake.enqueue_status = kRemoteError;
  }
  testing::expect_error<CollectiveError>([&] { guard.run("ncclAllGather", fake_all_reduce); },
                                         {"NCCL error in ncclAllGather", "network error"});
  EXPECT_FALSE(guard.closed());  // NCCL's failure is the caller's to act on (the group aborts)
  EXPECT_TRUE(guard.abort("the collective failed"));
}

TEST_F(NcclCommGuardTest, ShutdownDestroysAQuiescentCommunicator) {
  {
    std::lock_guard<std::mutex> lock(fake.mutex);
    fake.in_progress_polls = 2;  // finalizing takes two polls
  }
  NcclCommGuard guard(kFakeCalls, "rank 0 of 1 on /gpu:0");
  ASSERT_TRUE(guard.publish(&comm_));
  EXPECT_TRUE(guard.begin_shutdown("the NCCL group was destroyed"));
  testing::expect_error<CollectiveError>([&] { guard.run("ncclAllReduce", fake_all_reduce); },
                                         {"the NCCL group was destroyed"});
  guard.end_shutdown(std::chrono::steady_clock::now() + kBound);
  EXPECT_EQ(fake.count("ncclCommFinalize"), 1);
  EXPECT_EQ(fake.count("ncclCommDestroy"), 1);
  EXPECT_EQ(fake.count("ncclCommAbort"), 0);
  EXPECT_FALSE(guard.abort("too late"));  // nothing left to abort
  EXPECT_EQ(fake.count("ncclCommAbort"), 0);
}

TEST_F(NcclCommGuardTest, ShutdownPastItsDeadlineAborts) {
  // A peer never finalizes: the communicator stays in progress.
  NcclCommGuard guard(kFakeCalls, "rank 0 of 2 on /gpu:0");
  ASSERT_TRUE(guard.publish(&comm_));
  EXPECT_TRUE(guard.begin_shutdown("destroyed"));
  guard.end_shutdown(std::chrono::steady_clock::now() - 1s);  // the deadline has passed
  EXPECT_EQ(fake.count("ncclCommDestroy"), 0);
  EXPECT_EQ(fake.count("ncclCommAbort"), 1);
}

TEST_F(NcclCommGuardTest, AbortDuringShutdownEndsItWithoutASecondFree) {
  NcclCommGuard guard(kFakeCalls, "rank 0 of 2 on /gpu:0");
  ASSERT_TRUE(guard.publish(&comm_));
  EXPECT_TRUE(guard.begin_shutdown("the group was destroyed"));
  std::thread destructor([&] { guard.end_shutdown(std::chrono::steady_clock::now() + kBound); });
  ASSERT_TRUE(fake.wait_for([] { return fake.calls["ncclCommGetAsyncError"] >= 3; }));
  EXPECT_TRUE(guard.abort("heartbeat lost"));
  destructor.join();
  EXPECT_EQ(fake.count("ncclCommAbort"), 1);
  EXPECT_EQ(fake.count("ncclCommDestroy"), 0);
  EXPECT_EQ(guard.reason(), "the group was destroyed");  // the first reason stays
}

}  // namespace
}  // namespace strata::distribute

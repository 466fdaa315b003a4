// Parameter servers in this process for the ps tests: `Ps` (a ParameterServer on a free
// loopback port and a client for it, short deadlines) and `TwoPsStrategy` (variables placed as
// RemoteVariables round-robin over two of them, slots beside their variable, as
// ParameterServerStrategy places them).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "distribute/parameter_server/wire/parameter_client.h"
#include "distribute/parameter_server/wire/parameter_service.h"
#include "distribute/parameter_server/wire/remote_variable.h"
#include "tests/distribute/distribute_test_utils.h"

namespace strata::testing {

using distribute::ParameterClient;
using distribute::ParameterServer;
using distribute::ParameterServerOptions;
using distribute::RemoteVariable;

// Short deadlines: nothing here may wait long, a hung call fails the test within seconds.
inline ParameterServerOptions test_options() {
  ParameterServerOptions options;
  options.rpc_timeout = std::chrono::milliseconds(5000);
  return options;
}

struct Ps {
  std::unique_ptr<ParameterServer> server;
  std::shared_ptr<ParameterClient> client;
  std::string address;
  explicit Ps(int task = 0) {
    server = ParameterServer::start("localhost:0", test_options());
    address = "localhost:" + std::to_string(server->port());
    client = std::make_shared<ParameterClient>("/job:ps/replica:0/task:" + std::to_string(task),
                                               address, test_options());
  }
};

// A strategy whose variables are RemoteVariables round-robin over two ps servers, slots on
// their variable's ps (VariableSpec::colocate_with), as ParameterServerStrategy places them.
class TwoPsStrategy final : public distribute::Strategy {
 public:
  TwoPsStrategy() {
    ps_.push_back(std::make_unique<Ps>(0));
    ps_.push_back(std::make_unique<Ps>(1));
  }
  std::string name() const override { return "TwoPsStrategy"; }
  int num_replicas_in_sync() const override { return 1; }
  std::vector<Device> worker_devices() const override { return {Device::cpu()}; }
  void run_replicas(const std::function<void(int)>& fn) override { fn(0); }

  Ps& ps(int i) { return *ps_[size_t(i)]; }
  // Which ps hosts the variable named `name`, and its id there.
  std::pair<int, std::string> placement(const std::string& name) const {
    return placement_.at(name);
  }

 protected:
  VariablePtr create_variable(const VariableSpec& spec, const NextCreator&) override {
    int task = next_ % 2;
    if (spec.colocate_with != nullptr) {
      const auto* primary = dynamic_cast<const RemoteVariable*>(spec.colocate_with);
      if (primary == nullptr) throw ValueError("colocate_with is not a RemoteVariable");
      task = primary->client() == ps_[1]->client ? 1 : 0;
    } else {
      ++next_;
    }
    const std::string id = std::to_string(count_++) + ":" + spec.name;
    placement_[spec.name] = {task, id};
    return std::make_shared<RemoteVariable>(spec, ps_[size_t(task)]->client, id);
  }

 private:
  std::vector<std::unique_ptr<Ps>> ps_;
  int next_ = 0, count_ = 0;
  std::map<std::string, std::pair<int, std::string>> placement_;
};

}  // namespace strata::testing

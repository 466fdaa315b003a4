#include "apps/strata_launch/launch_plan.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <strata/strata.h>

namespace launch {

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw strata::IOError(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  const int err = errno;
  close(fd);
  if (!ok) throw strata::IOError(std::string("no free port on 127.0.0.1: ") + std::strerror(err));
  return ntohs(addr.sin_port);
}

std::vector<TaskPlan> make_plan(const PlanOptions& o) {
  std::vector<TaskPlan> tasks;
  const auto add = [&](const std::string& type, int count, bool serves) {
    for (int i = 0; i < count; ++i) tasks.push_back(TaskPlan{type, i, "", "", serves});
  };
  add(o.chief_name, o.chief ? 1 : 0, false);
  add("worker", o.workers, false);
  add("ps", o.ps, true);
  add("evaluator", o.evaluator ? 1 : 0, true);

  // Distinct ports: a free port is released before the next is asked for, so the system may
  // hand it out twice.
  std::vector<int> ports;
  for (size_t k = 0; k < tasks.size(); ++k) {
    int port = o.port_base > 0 ? o.port_base + int(k) : 0;
    for (int attempt = 0; port == 0 || std::find(ports.begin(), ports.end(), port) != ports.end();
         ++attempt) {
      if (attempt == 100) throw strata::IOError("could not find distinct free ports");
      port = free_port();
    }
    ports.push_back(port);
    tasks[k].address = o.host + ":" + std::to_string(port);
  }

  // Every task sees the whole cluster (the evaluator included, as TensorFlow's TF_CONFIG).
  strata::Json cluster = strata::Json::object();
  for (const TaskPlan& t : tasks) {
    strata::Json list = cluster.contains(t.type) ? cluster.at(t.type) : strata::Json::array();
    list.push_back(t.address);
    cluster.set(t.type, list);
  }
  for (TaskPlan& t : tasks) {
    strata::Json config = strata::Json::object();
    config.set("cluster", cluster);
    config.set("task", strata::Json::object({{"type", t.type}, {"index", t.index}}));
    if (!o.rpc_layer.empty()) config.set("rpc_layer", o.rpc_layer);
    t.tf_config = config.dump();
  }
  return tasks;
}

}  // namespace launch

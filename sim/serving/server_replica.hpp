#pragma once
// A plain server: `concurrency` slots, each serving one request for its service time, and an
// unbounded FCFS queue in front of them (a web service, a non-LLM model server, or the
// textbook M/G/c station when concurrency = c).
//
// One engine event per request (its completion). A completed slot takes the queue's head at
// once, so the queue is non-empty only while every slot is busy.
#include <deque>
#include <vector>

#include "sim/serving/replica.hpp"

namespace cs::serving {

struct ServerSpec {
  int concurrency = 1;  // slots, >= 1
  int gpus = 1;         // GPUs it holds: what it costs (its service time is given)
};

class ServerReplica final : public Replica {
 public:
  ServerReplica(engine::Simulator& sim, ReplicaListener& listener, uint32_t id, const ServerSpec& spec);
  ~ServerReplica() override;

  void submit(const Request& request) override;
  void take_queued(std::vector<Request>& out) override;
  void abort(std::vector<Request>& out) override;
  void on_event(uint64_t slot) override;

 private:
  struct Slot {
    Request request;
    engine::EventId completion;
    bool busy = false;
  };
  void start(uint32_t slot, const Request& request);

  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::deque<Request> queue_;
};

}  // namespace cs::serving

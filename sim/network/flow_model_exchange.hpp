#pragma once
// The flow model's bookkeeping for bulk exchanges (FlowModel::start_exchange): private to
// flow_model*.cpp, kept out of flow_model.hpp.
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/network/flow_model.hpp"

namespace cs::net {

// An exchange solved whole (start_exchange), while it runs.
struct FlowModel::SolvedExchange {
  std::unique_ptr<PairExchange> solved;
  PairSource* source = nullptr;
  FlowObserver* observer = nullptr;
  uint64_t tag = 0;
  engine::Time start = 0;  // when its flows take bandwidth
  engine::EventId done{};
};
// An exchange run as flows: its owner hears once, when the last is delivered. Kept until
// no flow of it is left to be told (outstanding == 0), then dropped at the next exchange
// call.
struct FlowModel::ExchangeFlows final : FlowObserver {
  FlowObserver* observer = nullptr;
  uint64_t tag = 0;
  bool cancelled = false;
  bool telling = false;          // telling its owner it is done (not to be dropped now)
  std::size_t outstanding = 0;   // flows started, neither told done nor cancelled
  double delivered = 0;          // bytes delivered by flows told done, and before (solved)
  std::vector<FlowId> flows;     // per pair (kNoFlow: done before it became flows)
  std::vector<double> bytes;     // per pair: the flow's bytes
  void release();                // done or cancelled: its per-pair arrays go
  void on_flow_done(FlowId flow, uint64_t pair) override;
};

}  // namespace cs::net

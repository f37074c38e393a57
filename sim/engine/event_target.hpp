#pragma once
#include <cstdint>

namespace cs::engine {

// A model that receives events (SimGrid-style: the network model, a collective, a fleet).
// `tag` is the model's own 64-bit payload (an index, a flow id, ...).
class EventTarget {
 public:
  virtual ~EventTarget() = default;
  virtual void on_event(uint64_t tag) = 0;
};

}  // namespace cs::engine

#include "sim/network/comm.hpp"

#include <unordered_map>
#include <utility>

namespace cs::net {

// One observer for every transfer started with a callable: the callable waits in a map until
// its transfer is done (or cancelled). Transfers never complete inside send() or
// collective(): completions are events, so the callable is always in place in time.
class Comm::Callbacks final : public TransferObserver {
 public:
  void add(TransferId id, std::function<void()> fn) { pending_.emplace(id, std::move(fn)); }
  void drop(TransferId id) { pending_.erase(id); }
  void on_transfer_done(TransferId id, uint64_t /*tag*/) override {
    const auto it = pending_.find(id);
    if (it == pending_.end()) return;
    std::function<void()> fn = std::move(it->second);
    pending_.erase(it);
    if (fn) fn();
  }

 private:
  std::unordered_map<TransferId, std::function<void()>> pending_;
};

Comm::Comm() = default;
Comm::~Comm() = default;

Comm::Callbacks& Comm::callbacks() {
  if (!callbacks_) callbacks_ = std::make_unique<Callbacks>();
  return *callbacks_;
}

void Comm::forget_callback(TransferId id) {
  if (callbacks_) callbacks_->drop(id);
}

std::vector<TransferId> Comm::send_together(std::span<const SendRequest> sends, TransferObserver* observer) {
  std::vector<TransferId> ids;
  ids.reserve(sends.size());
  for (const SendRequest& s : sends) ids.push_back(send(s.src, s.dst, s.bytes, observer, s.tag, s.flow_key));
  return ids;
}

TransferId Comm::send(int src, int dst, double bytes, std::function<void()> on_done, uint64_t flow_key) {
  const TransferId id = send(src, dst, bytes, &callbacks(), 0, flow_key);
  callbacks().add(id, std::move(on_done));
  return id;
}

TransferId Comm::collective(GroupId group, work::CollectiveOp op, double bytes, std::function<void()> on_done,
                            const CollectiveOptions& options) {
  const TransferId id = collective(group, op, bytes, &callbacks(), 0, options);
  callbacks().add(id, std::move(on_done));
  return id;
}

}  // namespace cs::net

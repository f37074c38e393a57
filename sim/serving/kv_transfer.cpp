#include "sim/serving/kv_transfer.hpp"

#include <algorithm>
#include <stdexcept>

#include "common/free_slots.hpp"

namespace cs::serving {

LinkKvTransfer::LinkKvTransfer(engine::Simulator& sim, const KvLinkSpec& spec)
    : sim_(sim), spec_(spec) {
  if (!(spec_.bandwidth_Bps > 0)) throw std::invalid_argument("kv_transfer.bandwidth: must be > 0");
  if (!(spec_.latency_s >= 0)) throw std::invalid_argument("kv_transfer.latency: must be >= 0");
}

LinkKvTransfer::~LinkKvTransfer() {
  for (const Pending& p : pending_) {
    if (p.observer) sim_.cancel(p.event);
  }
}

void LinkKvTransfer::send(uint32_t from, uint32_t, double bytes, KvTransferObserver& observer,
                          uint64_t tag) {
  if (link_free_s_.size() <= from) link_free_s_.resize(from + 1, 0.0);
  const double start = std::max(sim_.now(), link_free_s_[from]);
  link_free_s_[from] = start + std::max(0.0, bytes) / spec_.bandwidth_Bps;
  bytes_sent_ += std::max(0.0, bytes);
  const uint32_t slot = take_slot(pending_, free_);
  pending_[slot].observer = &observer;
  pending_[slot].tag = tag;
  pending_[slot].event = sim_.schedule_at(link_free_s_[from] + spec_.latency_s, *this, slot);
}

void LinkKvTransfer::on_event(uint64_t tag) {
  const auto slot = static_cast<uint32_t>(tag);
  Pending p = pending_[slot];
  pending_[slot].observer = nullptr;
  free_.push_back(slot);
  p.observer->on_kv_delivered(p.tag);
}

}  // namespace cs::serving

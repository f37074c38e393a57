#include "sim/serving/kv_transfer_comm.hpp"

#include <stdexcept>
#include <string>

#include "common/free_slots.hpp"

namespace cs::serving {

namespace {
int rank_in(const std::vector<int>& region, int gpus, uint32_t slot, int gpu) {
  const std::size_t slots = region.size() / static_cast<std::size_t>(gpus);
  return region[(slot % slots) * static_cast<std::size_t>(gpus) + static_cast<std::size_t>(gpu)];
}
}  // namespace

CommKvTransfer::CommKvTransfer(engine::Simulator& sim, net::Comm& comm, KvPlacement placement)
    : sim_(sim), comm_(comm), placement_(std::move(placement)) {
  const KvPlacement& p = placement_;
  if (p.prefill_gpus < 1 || p.decode_gpus < 1)
    throw std::invalid_argument("kv transfer: replicas need at least one GPU");
  if (p.prefill_ranks.size() < static_cast<std::size_t>(p.prefill_gpus) ||
      p.decode_ranks.size() < static_cast<std::size_t>(p.decode_gpus))
    throw std::invalid_argument("kv transfer: each pool's region must hold at least one replica's GPUs");
  for (const auto* region : {&p.prefill_ranks, &p.decode_ranks})
    for (const int r : *region)
      if (r < 0 || r >= comm_.ranks())
        throw std::invalid_argument("kv transfer: rank " + std::to_string(r) + " is outside the topology's " +
                                    std::to_string(comm_.ranks()) + " GPUs");
}

CommKvTransfer::~CommKvTransfer() {
  for (Pending& p : pending_) {
    if (!p.observer) continue;
    for (const net::TransferId id : p.sends) comm_.cancel(id);
    if (p.zero_bytes.valid()) sim_.cancel(p.zero_bytes);
  }
}

int CommKvTransfer::prefill_rank(uint32_t slot, int gpu) const {
  return rank_in(placement_.prefill_ranks, placement_.prefill_gpus, slot, gpu);
}

int CommKvTransfer::decode_rank(uint32_t slot, int gpu) const {
  return rank_in(placement_.decode_ranks, placement_.decode_gpus, slot, gpu);
}

void CommKvTransfer::send(uint32_t from, uint32_t to, double bytes, KvTransferObserver& observer,
                          uint64_t tag) {
  const uint32_t slot = take_slot(pending_, free_);
  Pending& p = pending_[slot];
  p.observer = &observer;
  p.tag = tag;
  p.sends.clear();
  if (!(bytes > 0)) {
    p.remaining = 0;
    p.zero_bytes = sim_.schedule_in(0.0, *this, slot);
    return;
  }
  bytes_sent_ += bytes;
  if (to == kNoReplica) to = next_decode_slot_++;
  const int gp = placement_.prefill_gpus;
  p.remaining = gp;
  for (int j = 0; j < gp; ++j) {
    const int src = prefill_rank(from, j);
    const int dst = decode_rank(to, j % placement_.decode_gpus);
    // The flow key spreads a replica's shards over equal paths where the routing hashes.
    pending_[slot].sends.push_back(comm_.send(src, dst, bytes / gp, this, slot, tag * 64 + static_cast<uint64_t>(j)));
  }
}

void CommKvTransfer::on_transfer_done(net::TransferId, uint64_t slot) {
  if (--pending_[slot].remaining == 0) deliver(static_cast<uint32_t>(slot));
}

void CommKvTransfer::on_event(uint64_t slot) { deliver(static_cast<uint32_t>(slot)); }

void CommKvTransfer::deliver(uint32_t slot) {
  Pending p = std::move(pending_[slot]);
  pending_[slot] = Pending{};
  free_.push_back(slot);
  p.observer->on_kv_delivered(p.tag);
}

}  // namespace cs::serving

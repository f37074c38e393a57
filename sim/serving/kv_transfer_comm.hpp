#pragma once
// Disaggregated serving's KV-cache transfers over the simulated network, through the
// communication layer (sim/network/comm.hpp): the scenario gives a topology, the prefill and
// the decode pools each hold a region of its GPUs (workload ranks), and every transfer is a
// set of point-to-point sends that share the fabric with whatever else moves on it.
//
// Placement: a pool's replica in placement slot k (ReplicaInfo::slot) holds the GPUs
// ranks[k*g .. k*g + g - 1] of its pool's region (g GPUs per replica); a slot beyond the
// region wraps around it (more replicas live than the region holds then share GPUs).
// A transfer of B bytes is one send per prefill GPU: prefill GPU j sends its share B / gp
// (tensor parallelism splits the KV heads) to decode GPU j mod gd; it is delivered when the
// last send arrives. With no decode replica chosen yet (KvTransfer::kNoReplica), the
// destination is the decode region's slots in turn.
#include <cstdint>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/network/comm.hpp"
#include "sim/serving/kv_transfer.hpp"

namespace cs::serving {

struct KvPlacement {
  std::vector<int> prefill_ranks;  // the prefill pool's GPUs, replica after replica
  std::vector<int> decode_ranks;   // the decode pool's, disjoint from the prefill pool's
  int prefill_gpus = 1;            // per replica
  int decode_gpus = 1;
};

class CommKvTransfer final : public KvTransfer,
                             public engine::EventTarget,
                             private net::TransferObserver {
 public:
  // Throws std::invalid_argument when a region holds no whole replica or a rank is outside
  // the layer's ranks. `comm` and `sim` outlive this.
  CommKvTransfer(engine::Simulator& sim, net::Comm& comm, KvPlacement placement);
  ~CommKvTransfer() override;  // cancels the sends in flight
  CommKvTransfer(const CommKvTransfer&) = delete;
  CommKvTransfer& operator=(const CommKvTransfer&) = delete;

  void send(uint32_t from, uint32_t to, double bytes, KvTransferObserver& observer,
            uint64_t tag) override;
  double bytes_sent() const override { return bytes_sent_; }
  // The first GPU (rank) of a slot's replica in each pool.
  int prefill_rank(uint32_t slot, int gpu = 0) const;
  int decode_rank(uint32_t slot, int gpu = 0) const;

  void on_event(uint64_t slot) override;  // a zero-byte transfer, delivered at once

 private:
  void on_transfer_done(net::TransferId id, uint64_t slot) override;
  void deliver(uint32_t slot);

  struct Pending {
    KvTransferObserver* observer = nullptr;
    uint64_t tag = 0;
    int remaining = 0;
    std::vector<net::TransferId> sends;
    engine::EventId zero_bytes;  // a transfer of nothing, delivered at once
  };
  engine::Simulator& sim_;
  net::Comm& comm_;
  KvPlacement placement_;
  uint32_t next_decode_slot_ = 0;
  std::vector<Pending> pending_;
  std::vector<uint32_t> free_;
  double bytes_sent_ = 0;
};

}  // namespace cs::serving

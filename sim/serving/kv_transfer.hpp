#pragma once
// Moves a request's KV cache from a prefill replica to a decode replica (disaggregated
// serving). The interface takes bytes and calls back at delivery. Replicas are named by their
// placement slots (ReplicaInfo::slot): which group of GPUs each holds.
//
// Two implementations:
// - CommKvTransfer (kv_transfer_comm.hpp): over the simulated network, through the
//   communication layer (sim/network/comm.hpp), when the scenario gives a topology.
// - LinkKvTransfer, the stand-in without a topology: each prefill slot sends over its own
//   link, one transfer at a time in FIFO order at `bandwidth_Bps`, and a transfer arrives
//   `latency_s` after its last byte leaves. Defaults: one 400 Gb/s RDMA NIC (50 GB/s) and
//   10 us, estimates.
#include <cstdint>
#include <vector>

#include "sim/engine/simulator.hpp"

namespace cs::serving {

class KvTransferObserver {
 public:
  virtual ~KvTransferObserver() = default;
  virtual void on_kv_delivered(uint64_t tag) = 0;
};

class KvTransfer {
 public:
  virtual ~KvTransfer() = default;
  // Sends `bytes` (>= 0) from the prefill replica in slot `from` to the decode replica in slot
  // `to` (kNoReplica: none chosen yet, the decode pool picks at delivery);
  // observer.on_kv_delivered(tag) fires once, at delivery.
  virtual void send(uint32_t from, uint32_t to, double bytes, KvTransferObserver& observer,
                    uint64_t tag) = 0;
  virtual double bytes_sent() const = 0;
  static constexpr uint32_t kNoReplica = ~uint32_t{0};
};

struct KvLinkSpec {
  double bandwidth_Bps = 50e9;
  double latency_s = 10e-6;
};

class LinkKvTransfer final : public KvTransfer, public engine::EventTarget {
 public:
  LinkKvTransfer(engine::Simulator& sim, const KvLinkSpec& spec);
  ~LinkKvTransfer() override;
  void send(uint32_t from, uint32_t to, double bytes, KvTransferObserver& observer,
            uint64_t tag) override;
  double bytes_sent() const override { return bytes_sent_; }
  void on_event(uint64_t slot) override;

 private:
  struct Pending {
    KvTransferObserver* observer = nullptr;
    uint64_t tag = 0;
    engine::EventId event;
  };
  engine::Simulator& sim_;
  KvLinkSpec spec_;
  std::vector<double> link_free_s_;  // by source replica: when its link is next idle
  std::vector<Pending> pending_;
  std::vector<uint32_t> free_;
  double bytes_sent_ = 0;
};

}  // namespace cs::serving

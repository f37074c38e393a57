#pragma once
// The flow model's records (flow_model.hpp): a flow, a class (the sharing flows of one route),
// a route, a link, a queued instant; and the inline accessors the hot paths call. Private to
// flow_model*.cpp, kept out of flow_model.hpp: its users compile the interface alone.
//
// Units: bytes, bytes/s, seconds.
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/network/flow_model.hpp"

namespace cs::net {

struct FlowModel::Flow {
  double bytes = 0;
  double finish = 0;  // sharing: its class's virtual time when its last byte is delivered
  FlowObserver* observer = nullptr;
  uint64_t tag = 0;
  RouteId route = 0;
  uint32_t version = 0;  // bumped whenever queued entries for this flow go stale
  Phase phase = Phase::free;
};
struct FlowModel::Waiting {  // a sharing flow in its class's queue, by finish tag
  double finish;
  FlowId flow;
  uint32_t version;
};
// The sharing flows of one route (see the header comment); a slot of classes_ while the
// route has any.
struct FlowModel::Class {
  RouteId route = 0;
  uint32_t n = 0;        // flows sharing
  uint32_t version = 0;  // bumped whenever its queued completion goes stale
  uint32_t mark = 0;     // component-search epoch
  bool fixed = false;    // progressive filling: rate settled
  // Formed on idle links and no flow has joined any of its links since: its one flow alone
  // keeps all of them busy, since its activation (vtime_at), at the route's bottleneck rate.
  bool alone = false;
  bool reschedule = false;  // its flows changed: its completion is queued anew at the solve
  double rate = 0;          // per flow
  double vtime = 0;         // virtual clock: bytes each flow received since the class formed
  engine::Time vtime_at = 0;  // when vtime was brought up to date
  std::vector<Waiting> queue;  // min-heap by (finish, flow); cancelled flows' entries stale
  // The bucket holding its queued completion (kNone: none), and that bucket's generation
  // then: a completion queued anew leaves its old entry stale, and the bucket one live
  // entry fewer.
  uint32_t bucket = kNone, bucket_generation = 0;
};
struct FlowModel::Route {
  uint32_t first = 0, count = 0;  // range in route_links_
  uint32_t cls = kNone;           // its class while it has sharing flows
  double latency_s = 0;
  double bottleneck_Bps = 0;
  double bytes_done = 0;
  // Time its flows spent alone (Class::alone) from activation to finish, s; an active
  // alone flow's whole expected time is in already (its links' busy time, and a sign that
  // they carried the bottleneck rate).
  double alone_s = 0;
};
// 8 bytes per link, touched twice per class per hop: the array must stay in cache. The
// uncontended case (one class) needs no list; shared links keep one in lists_.
struct FlowModel::Link {
  uint32_t count = 0;     // class entries (one per crossing) on this link
  uint32_t single = kNone;  // the class, when count == 1
};
struct FlowModel::Entry {
  uint32_t id;  // a flow, or kClassBit | a class
  uint32_t version;
};
struct FlowModel::Bucket {  // admissions and completions due at one instant
  engine::Time time = 0;
  bool live = false;
  // Entries not known to be stale: a bucket left with none is dropped unseen (after a solve
  // has queued many classes' completions anew, their old instants need no event).
  uint32_t pending = 0;
  uint32_t generation = 0;  // bumped when the slot is freed
  std::vector<Entry> entries;
};
struct FlowModel::Done {
  FlowObserver* observer;
  FlowId flow;
  uint64_t tag;
};

inline std::span<const LinkIndex> FlowModel::links_of_route(std::size_t route) const {
  const Route& r = routes_[route];
  return {route_links_.data() + r.first, r.count};
}

inline std::span<const LinkIndex> FlowModel::links_of(const Class& c) const { return links_of_route(c.route); }

inline uint32_t FlowModel::enqueue(engine::Time t, uint32_t id, uint32_t version) {
  if (last_bucket_ != kNone) {
    Bucket& b = buckets_[last_bucket_];
    if (b.live && std::abs(b.time - t) <= t * kSameInstantRel) {
      b.entries.push_back({id, version});
      ++b.pending;
      return last_bucket_;
    }
  }
  return enqueue_slow(t, id, version);
}

// The class's virtual clock now: bytes each of its flows received since it formed.
inline double FlowModel::vtime_now(const Class& c) const { return c.vtime + c.rate * (sim_.now() - c.vtime_at); }

}  // namespace cs::net

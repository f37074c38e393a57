// The flow model's max-min solve: progressive filling over the classes (flow_model.hpp) of
// the component an instant's changes touched.
#include <algorithm>
#include <functional>
#include <limits>

#include "sim/network/flow_model.hpp"
#include "sim/network/flow_model_state.hpp"
#include "sim/network/min_heap.hpp"

namespace cs::net {

using detail::kLater;

void FlowModel::mark_dirty(LinkIndex l) {
  if (!dirty_[l]) {
    dirty_[l] = 1;
    dirty_links_.push_back(l);
  }
}

void FlowModel::recompute() {
  // Classes below `from` keep their rates (flow_model.hpp); the margin keeps those level with
  // a change's bound, up to rounding, among the ones filled again.
  const double from = solve_from_ * (1 - 1e-9);
  solve_from_ = std::numeric_limits<double>::infinity();
  if (dirty_links_.empty()) return;
  // The union of the components touched by this instant's changes: classes that may change
  // rate and links reachable from a dirty link through them. Only their rates can change.
  ++epoch_;
  comp_links_.clear();
  comp_classes_.clear();
  for (LinkIndex l : dirty_links_) {
    dirty_[l] = 0;
    if (link_mark_[l] != epoch_) {
      link_mark_[l] = epoch_;
      comp_links_.push_back(l);
    }
  }
  dirty_links_.clear();
  // One pass over each component link's classes both grows the component and prices what the
  // classes that keep their rates leave of the link: whether a class keeps its rate is known
  // when it is met (its rate against `from`), so the solve needs no second pass over the
  // lists, and the kept rates are subtracted in the same order as by a pass of their own.
  uint64_t flows = 0, kept = 0;
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    const LinkIndex link = comp_links_[i];
    double residual = capacity_[link];
    uint32_t unfixed = link_flows_[link];
    for (uint32_t c : classes_on(link)) {
      Class& k = classes_[c];
      if (k.mark == epoch_) continue;
      if (!k.reschedule && k.rate < from) {  // keeps its rate
        k.fixed = true;
        residual -= k.rate * k.n;
        unfixed -= k.n;
        ++kept;
        continue;
      }
      k.mark = epoch_;
      k.fixed = false;
      comp_classes_.push_back(c);
      flows += k.n;
      for (const LinkIndex l : links_of(k)) {
        if (link_mark_[l] != epoch_) {
          link_mark_[l] = epoch_;
          comp_links_.push_back(l);
        }
      }
    }
    residual_[link] = std::max(0.0, residual);
    unfixed_[link] = unfixed;
  }
  if (comp_classes_.empty()) return;
  ++stats_.recomputations;
  stats_.classes_kept += kept;
  stats_.classes_refilled += comp_classes_.size();
  stats_.max_component_flows = std::max(stats_.max_component_flows, flows);
  solve_component();
}

void FlowModel::solve_component() {
  // Progressive filling: raise every unfixed flow's rate together; the link whose residual
  // capacity per unfixed flow is smallest saturates first and fixes its flows at that share.
  // A class of n flows counts n times on each link it crosses (n per crossing), so identical
  // flows are fixed together. A lazy min-heap of (share, link) with one live entry per link,
  // whose key (heap_key_) is at most the link's share now: a link's share only grows as flows
  // elsewhere get fixed (the level fixed is the smallest share), so a saturation leaves the
  // links it touched where they are, and a live entry that reaches the top below its link's
  // share goes back in at that share. The top is then the smallest (share, link) of all
  // links, as with an entry pushed at every change, and the same links saturate in the same
  // order at the same levels: the rates are bit for bit those of that eager heap. (A share
  // that rounding moves down, by an ulp, is pushed at once: the key stays a lower bound.)
  // An eager heap pushed every touched link after each saturation, and most of those entries
  // went stale before they reached the top (on a dragonfly all-to-all, thousands per solve
  // against a few dozen saturations).
  // recompute() left each component link's residual (what the classes that keep their rates
  // leave of it) and unfixed flows, and every component class unfixed.
  heap_.clear();
  for (LinkIndex l : comp_links_)
    if (unfixed_[l]) {
      heap_key_[l] = residual_[l] / unfixed_[l];
      heap_.push_back({heap_key_[l], l});
    }
  std::make_heap(heap_.begin(), heap_.end(), kLater);
  auto push = [&](double share, LinkIndex l) {
    heap_key_[l] = share;
    heap_.push_back({share, l});
    std::push_heap(heap_.begin(), heap_.end(), kLater);
  };
  double level = 0;  // the water level never goes down; guards against rounding drift
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), kLater);
    const auto [share, l] = heap_.back();
    heap_.pop_back();
    if (unfixed_[l] == 0 || share != heap_key_[l]) continue;  // saturated, or not its live entry
    if (const double now = residual_[l] / unfixed_[l]; now != share) {
      push(now, l);  // grew since: back in at its share now
      continue;
    }
    level = std::max(level, share);
    for (uint32_t c : classes_on(l)) {
      Class& k = classes_[c];
      if (k.fixed) continue;
      k.fixed = true;
      set_rate(c, level);
      const double used = level * k.n;
      for (const LinkIndex o : links_of(k)) {
        residual_[o] = std::max(0.0, residual_[o] - used);
        unfixed_[o] -= k.n;
        if (!touched_mark_[o]) touched_mark_[o] = 1, touched_.push_back(o);
      }
    }
    // A link the saturation touched keeps its entry, unless rounding took its share below
    // the entry's key.
    for (const LinkIndex o : touched_) {
      touched_mark_[o] = 0;
      if (o != l && unfixed_[o])
        if (const double now = residual_[o] / unfixed_[o]; now < heap_key_[o]) push(now, o);
    }
    touched_.clear();
  }
  // Each component link's residual started from what the kept classes leave and lost what the
  // re-filled ones took: it is exactly the capacity the rates now leave unused, crossings
  // counted.
  for (LinkIndex l : comp_links_) peak_util_[l] = std::max(peak_util_[l], 1.0 - residual_[l] / capacity_[l]);
}

void FlowModel::set_rate(uint32_t c, double rate) {
  Class& k = classes_[c];
  if (rate == k.rate && !k.reschedule) return;  // its queued completion is still right
  advance(k);  // at the old rate, up to now
  k.rate = rate;
  queue_completion(c);
}

}  // namespace cs::net

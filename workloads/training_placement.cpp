#include "workloads/training_placement.hpp"

#include <algorithm>
#include <string>

namespace cs::work {
namespace {

constexpr std::array<Dim, 5> kCanonical{Dim::tp, Dim::cp, Dim::ep, Dim::edp, Dim::pp};

Dim dim_of(const std::string& name) {
  if (name == "tp") return Dim::tp;
  if (name == "cp") return Dim::cp;
  if (name == "ep") return Dim::ep;
  if (name == "dp") return Dim::edp;  // the order's "dp" is the part of dp that ep leaves
  return Dim::pp;
}

}  // namespace

int RankCoords::operator[](Dim d) const {
  switch (d) {
    case Dim::tp: return tp;
    case Dim::cp: return cp;
    case Dim::ep: return ep;
    case Dim::edp: return edp;
    case Dim::pp: return pp;
  }
  return 0;
}

int& RankCoords::operator[](Dim d) {
  switch (d) {
    case Dim::tp: return tp;
    case Dim::cp: return cp;
    case Dim::ep: return ep;
    case Dim::edp: return edp;
    case Dim::pp: break;
  }
  return pp;
}

RankLayout::RankLayout(const ParallelPlan& plan) {
  sizes_ = {plan.tp, plan.cp, plan.ep, plan.dp / plan.ep, plan.pp};
  ranks_ = plan.tp * plan.cp * plan.dp * plan.pp;
  int stride = 1;
  for (const auto& name : order_dimensions(plan.order)) {
    const Dim d = dim_of(name);
    gpu_stride_[static_cast<int>(d)] = stride;
    stride *= size(d);
  }
}

RankCoords RankLayout::coords(int rank) const {
  RankCoords c;
  for (Dim d : kCanonical) {
    c[d] = rank % size(d);
    rank /= size(d);
  }
  return c;
}

int RankLayout::rank(const RankCoords& c) const {
  int r = 0;
  for (auto it = kCanonical.rbegin(); it != kCanonical.rend(); ++it) r = r * size(*it) + c[*it];
  return r;
}

int RankLayout::gpu(int rank) const {
  const RankCoords c = coords(rank);
  int g = 0;
  for (Dim d : kCanonical) g += c[d] * gpu_stride_[static_cast<int>(d)];
  return g;
}

std::vector<int> RankLayout::gpu_of_rank() const {
  std::vector<int> gpus(static_cast<std::size_t>(ranks_));
  for (int r = 0; r < ranks_; ++r) gpus[static_cast<std::size_t>(r)] = gpu(r);
  return gpus;
}

std::vector<int> RankLayout::group(int rank, std::initializer_list<Dim> varying) const {
  std::vector<int> members{rank};
  for (Dim d : varying) {
    std::vector<int> grown;
    grown.reserve(members.size() * static_cast<std::size_t>(size(d)));
    for (int m : members) {
      RankCoords c = coords(m);
      for (int i = 0; i < size(d); ++i) {
        c[d] = i;
        grown.push_back(this->rank(c));
      }
    }
    members = std::move(grown);
  }
  std::sort(members.begin(), members.end());
  return members;
}

}  // namespace cs::work

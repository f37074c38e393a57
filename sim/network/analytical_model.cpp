#include "sim/network/analytical_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs::net {

RoutedPlan::RoutedPlan(Network& network, const work::CollectivePlan& plan) : plan_(plan) {
  const topo::Topology& topology = network.topology();
  const auto num_links = static_cast<Eigen::Index>(topology.num_links());
  routing_.reserve(plan.stages.size());
  shares_.reserve(plan.stages.size());
  links_.reserve(plan.stages.size());
  latency_.reserve(plan.stages.size());

  std::vector<Eigen::Triplet<double>> triplets;
  for (const work::Stage& stage : plan.stages) {
    const auto n = static_cast<Eigen::Index>(stage.transfers.size());
    Eigen::VectorXd shares(n);
    triplets.clear();
    for (Eigen::Index t = 0; t < n; ++t) {
      const work::Transfer& tr = stage.transfers[static_cast<std::size_t>(t)];
      const topo::Route& route = network.route(tr.src, tr.dst);
      for (topo::LinkId l : route.links) triplets.emplace_back(static_cast<Eigen::Index>(l), t, 1.0);
      shares[t] = tr.share;
    }
    // Duplicates are summed: an entry counts the route's crossings of the link.
    Eigen::SparseMatrix<double> r(num_links, n);
    r.setFromTriplets(triplets.begin(), triplets.end());
    r.makeCompressed();

    std::vector<topo::LinkId> links;
    links.reserve(static_cast<std::size_t>(r.nonZeros()));
    for (Eigen::Index k = 0; k < r.nonZeros(); ++k)
      links.push_back(static_cast<topo::LinkId>(r.innerIndexPtr()[k]));
    std::sort(links.begin(), links.end());
    links.erase(std::unique(links.begin(), links.end()), links.end());

    routing_.push_back(std::move(r));
    shares_.push_back(std::move(shares));
    links_.push_back(std::move(links));
    latency_.emplace_back(network, stage);
  }
}

AnalyticalModel::AnalyticalModel(Network& network) {
  const std::size_t n = network.topology().num_links();
  capacity_Bps_.reserve(n);
  for (const topo::Link& l : network.topology().links()) capacity_Bps_.push_back(l.bandwidth_Bps);
  link_bytes_.assign(n, 0.0);
  link_busy_s_.assign(n, 0.0);
  load_.assign(n, 0.0);
  all_jobs_.assign(n, 0.0);
  own_job_.assign(n, 0.0);
}

namespace {

void check_inputs(double bytes, const CollectiveCosts& costs) {
  if (!(bytes >= 0) || !std::isfinite(bytes))
    throw std::invalid_argument("AnalyticalModel: bytes must be a finite number >= 0");
  if (!(costs.bandwidth_efficiency > 0 && costs.bandwidth_efficiency <= 1))
    throw std::invalid_argument("AnalyticalModel: bandwidth_efficiency must be in (0, 1]");
}

}  // namespace

double AnalyticalModel::stage_loads(const RoutedPlan& plan, std::size_t s, double bytes,
                                    const CollectiveCosts& costs) {
  // loads = R t with t = shares x bytes / efficiency, column by column into the scratch:
  // Eigen's product would fill a dense vector over every link of the fabric.
  const Eigen::SparseMatrix<double>& r = plan.routing_[s];
  const Eigen::VectorXd& shares = plan.shares_[s];
  const double scale = bytes / costs.bandwidth_efficiency;
  const int* outer = r.outerIndexPtr();
  const int* inner = r.innerIndexPtr();
  const double* value = r.valuePtr();
  for (Eigen::Index t = 0; t < r.cols(); ++t) {
    const double x = shares[t] * scale;
    for (int k = outer[t]; k < outer[t + 1]; ++k) load_[static_cast<std::size_t>(inner[k])] += value[k] * x;
  }

  return plan.latency_[s].seconds(costs);
}

void AnalyticalModel::record(const RoutedPlan& plan, std::size_t s) {
  for (topo::LinkId l : plan.links_[s]) {
    link_bytes_[l] += load_[l];
    link_busy_s_[l] += load_[l] / capacity_Bps_[l];
  }
}

void AnalyticalModel::clear(const RoutedPlan& plan, std::size_t s) {
  for (topo::LinkId l : plan.links_[s]) load_[l] = 0;
}

CollectiveEstimate AnalyticalModel::estimate(const RoutedPlan& plan, double bytes,
                                             const CollectiveCosts& costs) {
  check_inputs(bytes, costs);
  CollectiveEstimate e;
  e.time_s = costs.base_latency_s;
  e.stages.reserve(plan.stages());
  for (std::size_t s = 0; s < plan.stages(); ++s) {
    StageEstimate st;
    st.latency_s = stage_loads(plan, s, bytes, costs);
    for (topo::LinkId l : plan.links_[s]) {
      const double busy = load_[l] / capacity_Bps_[l];
      if (busy > st.bandwidth_s) {  // strict: ties keep the lowest link id
        st.bandwidth_s = busy;
        st.bottleneck = l;
      }
    }
    record(plan, s);
    clear(plan, s);
    e.time_s += st.latency_s + st.bandwidth_s;
    e.stages.push_back(st);
  }
  return e;
}

std::vector<CollectiveEstimate> AnalyticalModel::estimate_concurrent(std::span<const Job> jobs) {
  for (const Job& j : jobs) {
    if (j.plan == nullptr || j.costs == nullptr)
      throw std::invalid_argument("AnalyticalModel::estimate_concurrent: null plan or costs");
    check_inputs(j.bytes, *j.costs);
  }

  // Every job's load over all its stages, summed: what the others put on a link is this
  // minus the job's own total.
  for (const Job& j : jobs)
    for (std::size_t s = 0; s < j.plan->stages(); ++s) {
      stage_loads(*j.plan, s, j.bytes, *j.costs);
      for (topo::LinkId l : j.plan->links_[s]) all_jobs_[l] += load_[l];
      record(*j.plan, s);
      clear(*j.plan, s);
    }

  std::vector<CollectiveEstimate> out;
  out.reserve(jobs.size());
  for (const Job& j : jobs) {
    const RoutedPlan& plan = *j.plan;
    for (std::size_t s = 0; s < plan.stages(); ++s) {
      stage_loads(plan, s, j.bytes, *j.costs);
      for (topo::LinkId l : plan.links_[s]) own_job_[l] += load_[l];
      clear(plan, s);
    }
    CollectiveEstimate e;
    e.time_s = j.costs->base_latency_s;
    e.stages.reserve(plan.stages());
    for (std::size_t s = 0; s < plan.stages(); ++s) {
      StageEstimate st;
      st.latency_s = stage_loads(plan, s, j.bytes, *j.costs);
      for (topo::LinkId l : plan.links_[s]) {
        // Clamped: the subtraction may leave a rounding residue of either sign.
        const double others = std::max(0.0, all_jobs_[l] - own_job_[l]);
        const double busy = (load_[l] + others) / capacity_Bps_[l];
        if (busy > st.bandwidth_s) {
          st.bandwidth_s = busy;
          st.bottleneck = l;
        }
      }
      clear(plan, s);
      e.time_s += st.latency_s + st.bandwidth_s;
      e.stages.push_back(st);
    }
    for (std::size_t s = 0; s < plan.stages(); ++s)
      for (topo::LinkId l : plan.links_[s]) own_job_[l] = 0;
    out.push_back(std::move(e));
  }

  for (const Job& j : jobs)
    for (std::size_t s = 0; s < j.plan->stages(); ++s)
      for (topo::LinkId l : j.plan->links_[s]) all_jobs_[l] = 0;
  return out;
}

}  // namespace cs::net

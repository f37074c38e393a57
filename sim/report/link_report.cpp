// Per-link usage reports: JSON summary, CSV table, text table.
#include "sim/report/link_report.hpp"

#include "topology/report.hpp"

#include <algorithm>
#include <map>
#include <cstdio>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace cs::report {
namespace {

using json = nlohmann::json;

// One used link, with the derived figures every output shares.
struct Row {
  topo::LinkId id;
  double capacity_Bps, bytes, busy_s, busy_share, mean_utilization;
  std::optional<double> peak_utilization;  // absent when not measured
  bool busy_measured;
};

void check_size(const std::vector<double>& v, const topo::Topology& t, const char* name,
                bool may_be_empty) {
  if ((may_be_empty && v.empty()) || v.size() == t.num_links()) return;
  throw std::invalid_argument(std::string("link report: ") + name + " has " +
                              std::to_string(v.size()) + " entries, the topology " +
                              std::to_string(t.num_links()) + " links");
}

// Used links in link id order.
std::vector<Row> used_links(const topo::Topology& t, const LinkUsage& u) {
  check_size(u.bytes, t, "bytes", false);
  check_size(u.busy_s, t, "busy_s", true);
  check_size(u.peak_utilization, t, "peak_utilization", true);
  // No elapsed time: no meaningful share; report 0 rather than inf or nan (JSON has neither).
  const auto share = [&](double x) { return u.elapsed_s > 0 ? x / u.elapsed_s : 0.0; };
  std::vector<Row> rows;
  for (topo::LinkId l = 0; l < t.num_links(); ++l) {
    if (!(u.bytes[l] > 0)) continue;
    Row r{};
    r.id = l;
    r.capacity_Bps = t.link(l).bandwidth_Bps;
    r.bytes = u.bytes[l];
    r.busy_measured = !u.busy_s.empty();
    r.busy_s = r.busy_measured ? u.busy_s[l] : 0.0;
    r.busy_share = share(r.busy_s);
    r.mean_utilization = share(r.bytes / r.capacity_Bps);
    if (!u.peak_utilization.empty()) r.peak_utilization = u.peak_utilization[l];
    rows.push_back(r);
  }
  return rows;
}

std::string link_name(const topo::Topology& t, topo::LinkId l) {
  const topo::Link& link = t.link(l);
  return t.vertex(link.from).name + "->" + t.vertex(link.to).name;
}

json or_null(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

// Vertex names are free text in custom topologies.
void csv_field(std::ostream& out, const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) {
    out << s;
    return;
  }
  out << '"';
  for (char c : s) {
    if (c == '"') out << '"';
    out << c;
  }
  out << '"';
}

}  // namespace

json link_summary(const topo::Topology& t, const LinkUsage& u, std::size_t top) {
  std::vector<Row> rows = used_links(t, u);
  double bytes_total = 0;
  for (double b : u.bytes) bytes_total += b;
  double share_max = 0, share_sum = 0;
  for (const Row& r : rows) {
    share_max = std::max(share_max, r.busy_share);
    share_sum += r.busy_share;
  }
  const std::size_t n = std::min(top, rows.size());
  std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n), rows.end(),
                    [](const Row& a, const Row& b) {
                      if (a.busy_share != b.busy_share) return a.busy_share > b.busy_share;
                      if (a.bytes != b.bytes) return a.bytes > b.bytes;
                      return a.id < b.id;
                    });
  json hottest = json::array();
  for (std::size_t i = 0; i < n; ++i) {
    const Row& r = rows[i];
    hottest.push_back({{"id", r.id},
                       {"link", link_name(t, r.id)},
                       {"kind", std::string(topo::link_kind_name(t.link(r.id).kind))},
                       {"capacity_Bps", r.capacity_Bps},
                       {"bytes", r.bytes},
                       {"busy_s", r.busy_measured ? json(r.busy_s) : json(nullptr)},
                       {"busy_share", r.busy_measured ? json(r.busy_share) : json(nullptr)},
                       {"peak_utilization", or_null(r.peak_utilization)},
                       {"mean_utilization", r.mean_utilization}});
  }
  // Roll-up by class (tier and direction): where in the fabric the load sits, which the
  // hottest list alone hides when many links tie (every GPU's NVLink in a ring).
  struct Class {
    std::size_t links = 0;
    double bytes = 0, share_max = 0, share_sum = 0, mean_util_max = 0;
    std::optional<double> peak_max;
  };
  std::map<std::string, Class> classes;
  for (const Row& r : rows) {
    Class& c = classes[topo::link_class(t, r.id)];
    ++c.links;
    c.bytes += r.bytes;
    c.share_max = std::max(c.share_max, r.busy_share);
    c.share_sum += r.busy_share;
    c.mean_util_max = std::max(c.mean_util_max, r.mean_utilization);
    if (r.peak_utilization) c.peak_max = std::max(c.peak_max.value_or(0.0), *r.peak_utilization);
  }
  std::vector<std::pair<std::string, Class>> by_class(classes.begin(), classes.end());
  std::stable_sort(by_class.begin(), by_class.end(), [](const auto& a, const auto& b) {
    if (a.second.share_max != b.second.share_max) return a.second.share_max > b.second.share_max;
    return a.second.bytes > b.second.bytes;
  });
  const bool busy_measured = !u.busy_s.empty();
  json classes_json = json::array();
  for (const auto& [name, c] : by_class)
    classes_json.push_back({{"class", name},
                            {"links_used", c.links},
                            {"bytes", c.bytes},
                            {"busy_share_max", busy_measured ? json(c.share_max) : json(nullptr)},
                            {"busy_share_mean", busy_measured ? json(c.share_sum / static_cast<double>(c.links)) : json(nullptr)},
                            {"peak_utilization_max", or_null(c.peak_max)},
                            {"mean_utilization_max", c.mean_util_max}});
  json out;
  out["links_used"] = rows.size();
  out["by_class"] = std::move(classes_json);
  out["busy_share_max"] = share_max;
  out["busy_share_mean"] = rows.empty() ? 0.0 : share_sum / static_cast<double>(rows.size());
  out["bytes_total"] = bytes_total;
  out["hottest"] = std::move(hottest);
  return out;
}

std::string link_table_csv(const topo::Topology& t, const LinkUsage& u) {
  std::ostringstream out;
  out.precision(17);
  out << "link,from,to,kind,capacity_Bps,bytes,busy_s,busy_share,peak_utilization,"
         "mean_utilization\n";
  for (const Row& r : used_links(t, u)) {
    const topo::Link& link = t.link(r.id);
    out << r.id << ',';
    csv_field(out, t.vertex(link.from).name);
    out << ',';
    csv_field(out, t.vertex(link.to).name);
    out << ',' << topo::link_kind_name(link.kind) << ',' << r.capacity_Bps << ',' << r.bytes
        << ',';
    if (r.busy_measured) out << r.busy_s << ',' << r.busy_share;
    else out << ',';
    out << ',';
    if (r.peak_utilization) out << *r.peak_utilization;
    out << ',' << r.mean_utilization << '\n';
  }
  return out.str();
}

std::string link_classes_text(const json& summary_links) {
  const json& rows = summary_links.at("by_class");
  if (rows.empty()) return "";
  const auto percent = [](const json& v) {
    if (v.is_null()) return std::string("-");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", 100.0 * v.get<double>());
    return std::string(buf);
  };
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-24s %6s %10s %10s %12s\n", "class", "links", "busy max %", "busy mean %", "GB");
  std::string out = buf;
  for (const json& r : rows) {
    std::snprintf(buf, sizeof buf, "  %-24s %6zu %10s %10s %12.3f\n", r.at("class").get<std::string>().c_str(),
                  r.at("links_used").get<std::size_t>(), percent(r.at("busy_share_max")).c_str(),
                  percent(r.at("busy_share_mean")).c_str(), r.at("bytes").get<double>() / 1e9);
    out += buf;
  }
  return out;
}

std::string hottest_links_text(const json& summary_links) {
  const json& rows = summary_links.is_array() ? summary_links : summary_links.at("hottest");
  if (rows.empty()) return "no link carried bytes\n";
  std::size_t width = 4;  // "link"
  for (const json& r : rows) width = std::max(width, r.at("link").get<std::string>().size());
  const auto percent = [](const json& v) {
    if (v.is_null()) return std::string("-");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", 100.0 * v.get<double>());
    return std::string(buf);
  };
  // Names are padded here rather than by printf: they may be longer than any fixed buffer.
  const auto padded = [width](std::string name) {
    name.resize(width, ' ');
    return "  " + name + "  ";
  };
  char buf[128];
  std::snprintf(buf, sizeof buf, "%-11s %7s %7s %12s\n", "kind", "busy %", "peak %", "GB");
  std::string out = padded("link") + buf;
  for (const json& r : rows) {
    std::snprintf(buf, sizeof buf, "%-11s %7s %7s %12.3f\n",
                  r.at("kind").get<std::string>().c_str(), percent(r.at("busy_share")).c_str(),
                  percent(r.at("peak_utilization")).c_str(), r.at("bytes").get<double>() / 1e9);
    out += padded(r.at("link").get<std::string>()) + buf;
  }
  return out;
}

}  // namespace cs::report

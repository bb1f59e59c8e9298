#include "replay/report.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace phalanx::replay {

using nlohmann::json;

// The page (report_template.html, embedded at build time by embed_resource.cmake; see
// src/CMakeLists.txt). %%TEXT%% is replaced by the terminal summary (HTML-escaped) and
// %%DATA%% by the results JSON (with "</" escaped).
extern const char kReportTemplate[];
extern const std::size_t kReportTemplate_size;

namespace {

std::string HtmlEscape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string Fmt(const json& v) {
  if (!v.is_number()) return "-";
  char b[32];
  std::snprintf(b, sizeof(b), "%.2f", v.get<double>());
  return b;
}

void ReplaceAll(std::string* s, const std::string& from, const std::string& to) {
  size_t pos = 0;
  while ((pos = s->find(from, pos)) != std::string::npos) {
    s->replace(pos, from.size(), to);
    pos += to.size();
  }
}

}  // namespace

std::string RenderHtmlReport(const json& results) {
  std::string data = results.dump();
  ReplaceAll(&data, "</", "<\\/");
  std::string page(kReportTemplate, kReportTemplate_size);
  // The text summary first: the data may contain "%%TEXT%%" as a literal.
  const size_t t = page.find("%%TEXT%%");
  page.replace(t, 8, HtmlEscape(FormatReportSummary(results)));
  const size_t d = page.find("%%DATA%%");
  page.replace(d, 8, data);
  return page;
}

std::string FormatReportSummary(const json& r) {
  std::ostringstream o;
  o << "replay: " << r.value("mode", "") << "  " << r.value("trace", "") << "\n";
  const auto& seeds = r["seeds"];
  o << "seeds: ";
  if (seeds.size() > 1) {
    o << seeds.front().get<uint64_t>() << "-" << seeds.back().get<uint64_t>() << " ("
      << seeds.size() << ")";
  } else if (!seeds.empty()) {
    o << seeds.front().get<uint64_t>();
  }
  o << "   replay speed: " << Fmt(r["replay_pods_per_second"]) << " pods/s\n";
  const auto& c = r["comparison"];
  std::vector<std::string> head = {"policy"};
  for (const auto& col : c["columns"]) head.push_back(col["label"].get<std::string>());
  std::vector<std::vector<std::string>> rows = {head};
  for (const auto& row : c["rows"]) {
    std::vector<std::string> cells = {row["policy"].get<std::string>()};
    for (const auto& col : c["columns"])
      cells.push_back(Fmt(row["metrics"][col["key"].get<std::string>()]));
    rows.push_back(std::move(cells));
  }
  std::vector<size_t> w(head.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], row[i].size());
  }
  o << c.value("statistic", "") << ":\n";
  for (const auto& row : rows) {
    o << " ";
    for (size_t i = 0; i < row.size(); ++i) {
      std::string cell = row[i];
      if (i == 0) {
        cell.resize(w[i], ' ');
      } else {
        cell = std::string(w[i] - cell.size(), ' ') + cell;
      }
      o << " " << cell;
    }
    o << "\n";
  }
  for (const auto& run : r["runs"]) {
    if (!run.contains("queues")) continue;
    o << "queues (" << run["policy"].get<std::string>() << ", seed " << run["seed"].get<uint64_t>()
      << "; time-average " << run["queues"]["resource"].get<std::string>()
      << " allocated / deserved):\n";
    for (const auto& q : run["queues"]["series"]) {
      o << "  " << q["name"].get<std::string>() << "  " << Fmt(q["allocated_avg"]) << " / "
        << Fmt(q["deserved_avg"]) << "\n";
    }
    break;
  }
  if (r.value("mode", "") == "openb-paper") {
    bool has_paper = false;
    for (const auto& row : c["rows"])
      has_paper |= row["metrics"]["paper_unallocated_at_100_pct"].is_number();
    o << (has_paper ? "unallocated GPU share at 100% load, median over seeds, next to the paper's "
                      "figures\n"
                      "(Weng et al., USENIX ATC 2023; artifact expected_results, seeds 42-51):\n"
                    : "unallocated GPU share at 100% load, median over seeds (the paper's artifact "
                      "has no figures for this pod list or these policies):\n");
    char line[200];
    std::snprintf(line, sizeof(line), "  %-14s %8s %8s %11s   %s\n", "policy", "phalanx", "paper",
                  "difference", "vs FGD per seed: median [best, worst]");
    o << line;
    for (const auto& row : c["rows"]) {
      const auto& m = row["metrics"];
      const json& ours = m["unallocated_at_100_pct"];
      const json& paper = m["paper_unallocated_at_100_pct"];
      std::string diff = "-";
      if (ours.is_number() && paper.is_number()) {
        char b[32];
        std::snprintf(b, sizeof(b), "%+.2f", ours.get<double>() - paper.get<double>());
        diff = b;
      }
      std::string margin = "-";
      if (m["vs_fgd_median_pts"].is_number()) {
        char b[96];
        std::snprintf(b, sizeof(b), "%+.2f [%+.2f, %+.2f]", m["vs_fgd_median_pts"].get<double>(),
                      m["vs_fgd_best_pts"].get<double>(), m["vs_fgd_worst_pts"].get<double>());
        margin = b;
      }
      std::snprintf(line, sizeof(line), "  %-14s %8s %8s %11s   %s\n",
                    row["policy"].get<std::string>().c_str(), Fmt(ours).c_str(), Fmt(paper).c_str(),
                    diff.c_str(), margin.c_str());
      o << line;
    }
  }
  size_t violations = 0;
  for (const auto& run : r["runs"]) violations += run["summary"].value("invariant_violations", 0u);
  o << "invariant violations: " << violations << "\n";
  return o.str();
}

}  // namespace phalanx::replay

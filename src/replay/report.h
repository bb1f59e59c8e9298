// The replay report: one self-contained HTML page (no network: inline CSS, inline SVG
// drawn by a small inline script from the embedded results) and a terminal summary, both
// made from the results document of RunExperiments (experiment.h).
//
// Results document (JSON, "kind": "phalanx-replay-report", "version": 1):
//   mode, trace, policies[], seeds[], replay_pods_per_second,
//   runs[]: {policy, seed,
//            summary {pods, scheduled, dropped, wall_seconds, pods_per_second,
//                     gpu_alloc_avg_pct, gpu_alloc_peak_pct, ...},
//            timeline {t_hours[], gpu_alloc_pct[], running[], pending[]},   (<= 300 points)
//            frag_timeline {t_hours[], alloc_pct[], frag_ratio_pct[]},
//            queue_delay {count, mean_s, p50_s, p95_s, max_s, cdf {x_s[], p_pct[]}},
//            load_curve {step_pct[], alloc_pct[], frag_ratio_pct[], frag_pct[]}  (openb-paper)
//            unallocated_at_100_pct, frag_ratio_at_100_pct                    (openb-paper)
//            jobs {count, started, mean_jct_h, makespan_h, ...,                (philly)
//                  queue_delay_by_gpus[] {gpus ("1", "2-4", "5-8", "9-15", "16+"), jobs,
//                                         started, mean_queue_delay_min, p95_queue_delay_min}}}
//   comparison {statistic, columns[{key, label, better}], rows[{policy, seeds, metrics{}}]}
// Every number is rounded to 2 decimals; missing values are null.
//
// The page's charts: GPU allocation (over time, or against arrived load in openb-paper),
// unallocated GPU against load (openb-paper), fragmentation, queueing-delay CDF, and the
// per-policy comparison (bars of the first column, then a table of all columns); for
// philly also the queueing delay by gang size (per GPU-size bucket and policy: the p95 as a
// bar, the mean as a tick, minutes on a log(1 + x) axis, median over seeds). Elements
// tests can check: svg.chart#chart-alloc|chart-unalloc|chart-frag|chart-delay-cdf|
// chart-delay-by-gpus|chart-compare, rect.bar[data-policy][data-value],
// rect.gbar / line.gmark[data-policy][data-group][data-value] (chart-delay-by-gpus),
// table#comparison td[data-key], and body[data-rendered="ok"] once the script ran.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace phalanx::replay {

// The page for a results document: report_template.html (embedded at build time) with
// the terminal summary and the document filled in.
std::string RenderHtmlReport(const nlohmann::json& results);

// The comparison table and one line per run, for the terminal.
std::string FormatReportSummary(const nlohmann::json& results);

}  // namespace phalanx::replay

#include "sim/report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace phalanx::sim {

using nlohmann::json;

namespace {

// The page. %%DATA%% is replaced by the results JSON (with "</" escaped).
constexpr const char* kTemplate = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Phalanx replay report</title>
<style>
  body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
         color: #1d2329; background: #f6f7f9; }
  header { background: #1d2329; color: #fff; padding: 18px 28px; }
  header h1 { margin: 0 0 4px; font-size: 20px; font-weight: 600; }
  header p { margin: 0; color: #c9d1d9; }
  main { max-width: 1340px; margin: 0 auto; padding: 18px 28px 40px; }
  .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 18px; }
  section { background: #fff; border-radius: 8px; padding: 14px 18px;
            box-shadow: 0 1px 3px rgba(0,0,0,.08); }
  section h2 { font-size: 15px; margin: 0 0 2px; font-weight: 600; }
  .note { color: #57606a; margin: 0 0 8px; font-size: 12.5px; }
  svg.chart { width: 100%; height: auto; display: block; }
  svg .axis { stroke: #8c959f; stroke-width: 1; }
  svg .grid { stroke: #eaeef2; stroke-width: 1; }
  svg text { font-size: 11px; fill: #57606a; }
  svg .series { fill: none; stroke-width: 2; }
  svg .legend text { fill: #1d2329; font-size: 12px; }
  table { border-collapse: collapse; width: 100%; font-size: 13px; }
  th, td { text-align: right; padding: 5px 8px; border-bottom: 1px solid #eaeef2; }
  th:first-child, td:first-child { text-align: left; }
  th { font-weight: 600; color: #57606a; }
  td.best { font-weight: 700; color: #0a7d39; }
  .swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
  #error { color: #b42318; font-weight: 600; }
  .wide { grid-column: 1 / -1; }
</style>
</head>
<body>
<header><h1>Phalanx replay report</h1><p id="subtitle"></p></header>
<main>
<p id="error"></p>
<noscript><pre>%%TEXT%%</pre></noscript>
<div class="grid" id="charts"></div>
</main>
<script type="application/json" id="phalanx-results">%%DATA%%</script>
<script>
(function () {
"use strict";
var NS = "http://www.w3.org/2000/svg";
var COLORS = ["#2f6fde", "#e8590c", "#2b8a3e", "#c2255c", "#7048e8", "#e67700", "#0b7285", "#495057"];
function el(tag, attrs, parent, text) {
  var e = tag === "svg" || parent instanceof SVGElement ? document.createElementNS(NS, tag)
                                                        : document.createElement(tag);
  for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function fmt(v) { return v === null || v === undefined || !isFinite(v) ? "\u2013" : Number(v).toFixed(2); }
function finite(v) { return v !== null && v !== undefined && isFinite(v); }
function median(a) {
  a = a.filter(finite).slice().sort(function (x, y) { return x - y; });
  if (!a.length) return null;
  var n = a.length;
  return n % 2 ? a[(n - 1) / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}
function ticks(lo, hi, n) {
  if (!(hi > lo)) { hi = lo + 1; }
  var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / n)));
  var err = (hi - lo) / n / step;
  if (err >= 7.5) step *= 10; else if (err >= 3.5) step *= 5; else if (err >= 1.5) step *= 2;
  var out = [];
  for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toFixed(10));
  return out;
}
function section(title, note, wide) {
  var s = el("section", wide ? { "class": "wide" } : {}, document.getElementById("charts"));
  el("h2", {}, s, title);
  if (note) el("p", { "class": "note" }, s, note);
  return s;
}
// series: [{name, color, xs, ys, dash}]
function lineChart(parent, id, series, o) {
  var W = 640, H = 330, m = { l: 58, r: 18, t: 14, b: 66 };
  var xs = [], ys = [];
  series.forEach(function (s) {
    for (var i = 0; i < s.xs.length; i++) {
      var x = s.xs[i], y = s.ys[i];
      if (!finite(x) || !finite(y)) continue;
      if ((o.xmin !== undefined && x < o.xmin) || (o.xmax !== undefined && x > o.xmax)) continue;
      xs.push(x); ys.push(y);
    }
  });
  var x0 = o.xmin !== undefined ? o.xmin : Math.min.apply(null, xs.concat([0]));
  var x1 = o.xmax !== undefined ? o.xmax : Math.max.apply(null, xs.concat([x0 + 1]));
  var y0 = o.ymin !== undefined ? o.ymin : Math.min.apply(null, ys.concat([0]));
  var y1 = o.ymax !== undefined ? o.ymax : Math.max.apply(null, ys.concat([y0 + 1])) * 1.05;
  var sx = function (v) { return m.l + (v - x0) / (x1 - x0) * (W - m.l - m.r); };
  var sy = function (v) { return H - m.b - (v - y0) / (y1 - y0) * (H - m.t - m.b); };
  var svg = el("svg", { "class": "chart", id: id, viewBox: "0 0 " + W + " " + H, role: "img",
                        "aria-label": o.title });
  parent.appendChild(svg);
  ticks(y0, y1, 5).forEach(function (t) {
    if (t < y0 || t > y1) return;
    el("line", { "class": "grid", x1: m.l, x2: W - m.r, y1: sy(t), y2: sy(t) }, svg);
    el("text", { x: m.l - 6, y: sy(t) + 4, "text-anchor": "end" }, svg, String(t));
  });
  ticks(x0, x1, 7).forEach(function (t) {
    if (t < x0 || t > x1) return;
    el("line", { "class": "axis", x1: sx(t), x2: sx(t), y1: H - m.b, y2: H - m.b + 4 }, svg);
    el("text", { x: sx(t), y: H - m.b + 16, "text-anchor": "middle" }, svg, String(t));
  });
  el("line", { "class": "axis", x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b }, svg);
  el("line", { "class": "axis", x1: m.l, x2: m.l, y1: m.t, y2: H - m.b }, svg);
  el("text", { x: (m.l + W - m.r) / 2, y: H - m.b + 32, "text-anchor": "middle" }, svg, o.xlabel);
  el("text", { x: 14, y: (m.t + H - m.b) / 2, "text-anchor": "middle",
               transform: "rotate(-90 14 " + (m.t + H - m.b) / 2 + ")" }, svg, o.ylabel);
  series.forEach(function (s) {
    var d = "", gap = true, n = 0;
    for (var i = 0; i < s.xs.length; i++) {
      var x = s.xs[i], y = s.ys[i];
      if (!finite(x) || !finite(y) || x < x0 || x > x1) { gap = true; continue; }
      var X = sx(x).toFixed(1), Y = sy(Math.max(y0, Math.min(y1, y))).toFixed(1);
      if (gap) d += "M" + X + " " + Y + " ";
      else if (o.step) d += "H" + X + " V" + Y + " ";
      else d += "L" + X + " " + Y + " ";
      gap = false;
      n++;
    }
    var p = el("path", { "class": "series", d: d.trim(), stroke: s.color, "data-policy": s.name,
                          "data-points": String(n) }, svg);
    if (s.dash) p.setAttribute("stroke-dasharray", s.dash);
    el("title", {}, p, s.name);
  });
  var lg = el("g", { "class": "legend" }, svg), lx = m.l;
  series.forEach(function (s) {
    el("rect", { x: lx, y: H - 20, width: 12, height: 4, fill: s.color }, lg);
    var t = el("text", { x: lx + 16, y: H - 15 }, lg, s.name);
    lx += 28 + 7 * s.name.length;
  });
  return svg;
}
function barChart(parent, id, rows, extra, o) {
  var W = 640, H = 300, m = { l: 58, r: 18, t: 18, b: 52 };
  var vals = [];
  rows.forEach(function (r) { if (finite(r.value)) vals.push(r.value); if (extra && finite(r.extra)) vals.push(r.extra); });
  var y1 = vals.length ? Math.max.apply(null, vals) * 1.15 : 1;
  if (!(y1 > 0)) y1 = 1;
  var sy = function (v) { return H - m.b - v / y1 * (H - m.t - m.b); };
  var svg = el("svg", { "class": "chart", id: id, viewBox: "0 0 " + W + " " + H, role: "img",
                        "aria-label": o.title });
  parent.appendChild(svg);
  ticks(0, y1, 5).forEach(function (t) {
    if (t > y1) return;
    el("line", { "class": "grid", x1: m.l, x2: W - m.r, y1: sy(t), y2: sy(t) }, svg);
    el("text", { x: m.l - 6, y: sy(t) + 4, "text-anchor": "end" }, svg, String(t));
  });
  el("line", { "class": "axis", x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b }, svg);
  el("text", { x: 14, y: (m.t + H - m.b) / 2, "text-anchor": "middle",
               transform: "rotate(-90 14 " + (m.t + H - m.b) / 2 + ")" }, svg, o.ylabel);
  var slot = (W - m.l - m.r) / Math.max(1, rows.length), bw = Math.min(60, slot * (extra ? 0.36 : 0.6));
  rows.forEach(function (r, i) {
    var cx = m.l + slot * (i + 0.5);
    var bx = extra ? cx - bw - 2 : cx - bw / 2;
    if (finite(r.value)) {
      var b = el("rect", { "class": "bar", x: bx, y: sy(r.value), width: bw,
                           height: Math.max(0, H - m.b - sy(r.value)), fill: r.color,
                           "data-policy": r.policy, "data-value": fmt(r.value) }, svg);
      el("title", {}, b, r.policy + ": " + fmt(r.value));
      el("text", { "class": "bar-label", x: bx + bw / 2, y: sy(r.value) - 4, "text-anchor": "middle",
                   "data-policy": r.policy }, svg, fmt(r.value));
    }
    if (extra && finite(r.extra)) {
      var e = el("rect", { "class": "bar-extra", x: cx + 2, y: sy(r.extra), width: bw,
                           height: Math.max(0, H - m.b - sy(r.extra)), fill: "none", stroke: r.color,
                           "stroke-dasharray": "4 3", "data-policy": r.policy,
                           "data-value": fmt(r.extra) }, svg);
      el("title", {}, e, r.policy + " (" + extra + "): " + fmt(r.extra));
      el("text", { x: cx + 2 + bw / 2, y: sy(r.extra) - 4, "text-anchor": "middle" }, svg, fmt(r.extra));
    }
    el("text", { x: cx, y: H - m.b + 16, "text-anchor": "middle" }, svg, r.policy);
  });
  if (extra) {
    el("rect", { x: m.l, y: H - 18, width: 12, height: 8, fill: "#8c959f" }, svg);
    el("text", { x: m.l + 16, y: H - 10 }, svg, "this run");
    el("rect", { x: m.l + 90, y: H - 18, width: 12, height: 8, fill: "none", stroke: "#57606a",
                 "stroke-dasharray": "3 2" }, svg);
    el("text", { x: m.l + 106, y: H - 10 }, svg, extra);
  }
  return svg;
}

var D = JSON.parse(document.getElementById("phalanx-results").textContent);
var color = {};
D.policies.forEach(function (p, i) { color[p] = COLORS[i % COLORS.length]; });
var byPolicy = {};
D.runs.forEach(function (r) { (byPolicy[r.policy] = byPolicy[r.policy] || []).push(r); });
var paper = D.mode === "openb-paper";
var seeds = D.seeds.length > 1 ? D.seeds[0] + "\u2013" + D.seeds[D.seeds.length - 1] + " (" + D.seeds.length + " seeds)" : String(D.seeds[0]);
document.getElementById("subtitle").textContent = D.mode + " \u00b7 " + D.trace + " \u00b7 policies " +
  D.policies.join(", ") + " \u00b7 seeds " + seeds + " \u00b7 replay speed " + fmt(D.replay_pods_per_second) + " pods/s";

function medianCurve(runs, key) {
  var n = runs[0].load_curve[key].length, out = [];
  for (var i = 0; i < n; i++) out.push(median(runs.map(function (r) { return r.load_curve[key][i]; })));
  return out;
}
var first = function (p) { return byPolicy[p][0]; };

// 1. allocation
if (paper) {
  var s1 = section("GPU allocation as load grows",
    "Allocated GPUs against requested GPUs of the pods arrived so far (both in % of cluster GPU capacity), median over seeds. Dotted: ideal.");
  var ser = D.policies.map(function (p) {
    return { name: p, color: color[p], xs: first(p).load_curve.step_pct, ys: medianCurve(byPolicy[p], "alloc_pct") };
  });
  var xsI = [], ysI = [];
  for (var i = 0; i <= 130; i++) { xsI.push(i); ysI.push(Math.min(i, 100)); }
  ser.push({ name: "ideal", color: "#adb5bd", xs: xsI, ys: ysI, dash: "3 3" });
  lineChart(s1, "chart-alloc", ser, { title: "GPU allocation", xlabel: "arrived workload (% of GPU capacity)",
                                      ylabel: "allocated GPU (%)", xmin: 0, xmax: 130, ymin: 0, ymax: 100 });
  var s2 = section("Unallocated GPU near full load (the paper's Fig. 9)",
    "100 \u2212 allocation %, median over seeds; at 100 % load this is the headline figure compared with the paper.");
  lineChart(s2, "chart-unalloc", D.policies.map(function (p) {
    return { name: p, color: color[p], xs: first(p).load_curve.step_pct,
             ys: medianCurve(byPolicy[p], "alloc_pct").map(function (v) { return finite(v) ? 100 - v : null; }) };
  }), { title: "Unallocated GPU", xlabel: "arrived workload (% of GPU capacity)", ylabel: "unallocated GPU (%)",
        xmin: 75, xmax: 130, ymin: 0 });
} else {
  var s1b = section("GPU allocation over time",
    "GPU milli held by bound pods in % of cluster GPU capacity" + (D.seeds.length > 1 ? "; first seed of each policy." : "."));
  lineChart(s1b, "chart-alloc", D.policies.map(function (p) {
    var r = first(p); return { name: p, color: color[p], xs: r.timeline.t_hours, ys: r.timeline.gpu_alloc_pct };
  }), { title: "GPU allocation", xlabel: "time (hours)", ylabel: "allocated GPU (%)", ymin: 0, ymax: 100,
        step: true });
}

// 1b. queues: per-queue allocation (solid) and fair share (dashed) over time
var qrun = first(D.policies[0]);
if (qrun.queues) {
  var sq = section("Per-queue share over time",
    "Allocated " + qrun.queues.resource + " per queue (solid) and its deserved fair share (dashed); " +
    D.policies[0] + ", seed " + qrun.seed + ".", true);
  var qser = [];
  qrun.queues.series.forEach(function (q, i) {
    var c = COLORS[i % COLORS.length];
    qser.push({ name: q.name + " allocated", color: c, xs: qrun.queues.t_hours, ys: q.allocated });
    qser.push({ name: q.name + " deserved", color: c, xs: qrun.queues.t_hours, ys: q.deserved, dash: "4 3" });
  });
  lineChart(sq, "chart-queues", qser, { title: "Per-queue share", xlabel: "time (hours)",
                                        ylabel: qrun.queues.resource, ymin: 0, step: true });
}

// 2. fragmentation
var s3 = section("Fragmentation", paper
  ? "Fragmented share of idle GPU milli (FGD's measure against the trace's pod shapes) as load grows, median over seeds."
  : "Fragmented share of idle GPU milli (FGD's measure against the trace's pod shapes) over time.");
if (paper) {
  lineChart(s3, "chart-frag", D.policies.map(function (p) {
    return { name: p, color: color[p], xs: first(p).load_curve.step_pct, ys: medianCurve(byPolicy[p], "frag_ratio_pct") };
  }), { title: "Fragmentation", xlabel: "arrived workload (% of GPU capacity)", ylabel: "fragmented idle GPU (%)",
        xmin: 0, xmax: 130, ymin: 0, ymax: 100 });
} else {
  lineChart(s3, "chart-frag", D.policies.map(function (p) {
    var r = first(p); return { name: p, color: color[p], xs: r.frag_timeline.t_hours, ys: r.frag_timeline.frag_ratio_pct };
  }), { title: "Fragmentation", xlabel: "time (hours)", ylabel: "fragmented idle GPU (%)", ymin: 0, ymax: 100,
        step: true });
}

// 3. queueing delay CDF
var maxDelay = 0;
D.runs.forEach(function (r) { if (finite(r.queue_delay.max_s)) maxDelay = Math.max(maxDelay, r.queue_delay.max_s); });
var unit = maxDelay > 7200 ? ["hours", 3600] : maxDelay > 120 ? ["minutes", 60] : ["seconds", 1];
var s4 = section("Queueing delay CDF", (D.mode === "philly" ? "Jobs: submission to start of the whole gang" :
  "Pods: arrival to binding") + (D.seeds.length > 1 ? "; first seed of each policy." : ".") +
  (paper ? " (Pods that do not fit are dropped on arrival in this methodology.)" : ""));
lineChart(s4, "chart-delay-cdf", D.policies.map(function (p) {
  var c = first(p).queue_delay.cdf;
  return { name: p, color: color[p], xs: c.x_s.map(function (v) { return finite(v) ? v / unit[1] : v; }), ys: c.p_pct };
}), { title: "Queueing delay CDF", xlabel: "queueing delay (" + unit[0] + ")", ylabel: "share (%)",
      xmin: 0, ymin: 0, ymax: 100, step: true });

// 4. comparison
var C = D.comparison, head = C.columns[0];
var s5 = section("Per-policy comparison", head.label + " (" + C.statistic + (head.better === "lower" ? ", lower is better" : ", higher is better") + ")" +
  (paper ? "; dashed: the paper's published figure." : ""), false);
barChart(s5, "chart-compare", C.rows.map(function (r) {
  return { policy: r.policy, color: color[r.policy], value: r.metrics[head.key],
           extra: paper ? r.metrics.paper_unallocated_at_100_pct : null };
}), paper ? "paper" : null, { title: head.label, ylabel: head.label });

var s6 = section("Comparison table", C.statistic + "; best value per column in bold.", true);
var tbl = el("table", { id: "comparison" }, s6);
var tr = el("tr", {}, el("thead", {}, tbl));
el("th", {}, tr, "policy");
el("th", {}, tr, "seeds");
C.columns.forEach(function (c) { el("th", {}, tr, c.label); });
var tb = el("tbody", {}, tbl);
var best = {};
C.columns.forEach(function (c) {
  if (c.key.indexOf("paper_") === 0) return;
  var v = C.rows.map(function (r) { return r.metrics[c.key]; }).filter(finite);
  if (v.length > 1) best[c.key] = c.better === "lower" ? Math.min.apply(null, v) : Math.max.apply(null, v);
});
C.rows.forEach(function (r) {
  var row = el("tr", { "data-policy": r.policy }, tb);
  var td = el("td", {}, row);
  el("span", { "class": "swatch", style: "background:" + color[r.policy] }, td);
  td.appendChild(document.createTextNode(r.policy));
  el("td", {}, row, String(r.seeds));
  C.columns.forEach(function (c) {
    var v = r.metrics[c.key];
    el("td", { "data-key": c.key, "class": finite(v) && best[c.key] === v ? "best" : "" }, row, fmt(v));
  });
});

var s7 = section("Runs", "Every run of this report.", true);
var rt = el("table", { id: "runs" }, s7);
var rh = el("tr", {}, el("thead", {}, rt));
["policy", "seed", "pods", "bound", "not placed", "pending at end", "virtual time (h)", "wall time (s)", "pods/s", "invariant violations"]
  .forEach(function (h) { el("th", {}, rh, h); });
var rb = el("tbody", {}, rt);
D.runs.forEach(function (r) {
  var s = r.summary, row = el("tr", { "data-policy": r.policy, "data-seed": String(r.seed) }, rb);
  [r.policy, r.seed, s.pods, s.scheduled, s.dropped, s.pending_at_end, fmt(s.virtual_seconds / 3600),
   fmt(s.wall_seconds), fmt(s.pods_per_second), s.invariant_violations].forEach(function (v) { el("td", {}, row, String(v)); });
});
document.body.setAttribute("data-rendered", "ok");
})();
</script>
<script>
window.addEventListener("error", function (e) {
  document.body.setAttribute("data-render-error", String(e.message));
  document.getElementById("error").textContent = "Report script error: " + e.message;
});
if (document.body.getAttribute("data-rendered") !== "ok" && !document.body.hasAttribute("data-render-error")) {
  document.body.setAttribute("data-render-error", "renderer did not finish");
}
</script>
</body>
</html>
)HTML";

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
  std::string page = kTemplate;
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
    o << "unallocated GPU share at 100% load, median over seeds, next to the paper's figures\n"
         "(Weng et al., USENIX ATC 2023; artifact expected_results, seeds 42-51):\n";
    char line[160];
    std::snprintf(line, sizeof(line), "  %-14s %8s %8s %11s\n", "policy", "phalanx", "paper",
                  "difference");
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
      std::snprintf(line, sizeof(line), "  %-14s %8s %8s %11s\n",
                    row["policy"].get<std::string>().c_str(), Fmt(ours).c_str(), Fmt(paper).c_str(),
                    diff.c_str());
      o << line;
    }
  }
  size_t violations = 0;
  for (const auto& run : r["runs"]) violations += run["summary"].value("invariant_violations", 0u);
  o << "invariant violations: " << violations << "\n";
  return o.str();
}

bool WriteTextFile(const std::string& path, const std::string& content, std::string* error) {
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    *error = path + ": cannot open for writing";
    return false;
  }
  out << content;
  if (!out) {
    *error = path + ": write failed";
    return false;
  }
  return true;
}

}  // namespace phalanx::sim

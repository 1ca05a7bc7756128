// Inline SVG charts and the HTML page around them (html.h), plus the capacity-plan page.
#include "report/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "report/plan_report.h"

namespace fleetsim::html {

namespace {

constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr int kW = 820, kH = 360, kL = 70, kR = 320, kT = 30, kB = 45;

std::string f2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}
std::string g4(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string frame(const std::string& title, const std::string& x_label, const std::string& y_label,
                  double xmax, double ymax, double ymin = 0, double log_xmin = 0) {
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kW) +
                  "\" height=\"" + std::to_string(kH) + "\" viewBox=\"0 0 " + std::to_string(kW) +
                  " " + std::to_string(kH) + "\">";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>";
  s += "<text x=\"" + std::to_string(kW / 2) +
       "\" y=\"18\" text-anchor=\"middle\" "
       "font-size=\"14\">" +
       escape(title) + "</text>";
  const int x1 = kW - kR, y1 = kH - kB;
  s += "<line x1=\"" + std::to_string(kL) + "\" y1=\"" + std::to_string(y1) + "\" x2=\"" +
       std::to_string(x1) + "\" y2=\"" + std::to_string(y1) + "\" stroke=\"black\"/>";
  s += "<line x1=\"" + std::to_string(kL) + "\" y1=\"" + std::to_string(kT) + "\" x2=\"" +
       std::to_string(kL) + "\" y2=\"" + std::to_string(y1) + "\" stroke=\"black\"/>";
  for (int t = 0; t <= 4; ++t) {
    const double fx = kL + (x1 - kL) * t / 4.0, fy = y1 - (y1 - kT) * t / 4.0;
    s += "<text x=\"" + f2(fx) + "\" y=\"" + std::to_string(y1 + 15) +
         "\" text-anchor=\"middle\" font-size=\"10\">" +
         g4(log_xmin > 0 ? log_xmin * std::pow(xmax / log_xmin, t / 4.0) : xmax * t / 4) +
         "</text>";
    if (ymax > 0)
      s += "<text x=\"" + std::to_string(kL - 4) + "\" y=\"" + f2(fy + 3) +
           "\" text-anchor=\"end\" font-size=\"10\">" + g4(ymin + (ymax - ymin) * t / 4) +
           "</text>";
  }
  s += "<text x=\"" + std::to_string((kL + x1) / 2) + "\" y=\"" + std::to_string(kH - 8) +
       "\" text-anchor=\"middle\" font-size=\"12\">" + escape(x_label) + "</text>";
  s += "<text x=\"14\" y=\"" + std::to_string((kT + y1) / 2) +
       "\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 14 " +
       std::to_string((kT + y1) / 2) + ")\">" + escape(y_label) + "</text>";
  return s;
}

std::string legend(size_t i, const std::string& label) {
  const int y = kT + 14 * static_cast<int>(i);
  return "<rect x=\"" + std::to_string(kW - kR + 10) + "\" y=\"" + std::to_string(y) +
         "\" width=\"10\" height=\"10\" fill=\"" + kColors[i % 10] + "\"/><text x=\"" +
         std::to_string(kW - kR + 24) + "\" y=\"" + std::to_string(y + 9) + "\" font-size=\"10\">" +
         escape(label) + "</text>";
}

double nice_max(double v) {
  return v > 0 ? v * 1.05 : 1;
}

}  // namespace

const char* series_color(int k) {
  return kColors[k % 10];
}
std::string fixed2(double v) {
  return f2(v);
}

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string scatter_svg(const std::string& title, const std::string& x_label,
                        const std::string& y_label, const std::vector<Series>& series) {
  double xmax = 0, ymax = 0;
  for (const auto& se : series)
    for (size_t i = 0; i < se.x.size(); ++i)
      xmax = std::max(xmax, se.x[i]), ymax = std::max(ymax, se.y[i]);
  xmax = nice_max(xmax), ymax = nice_max(ymax);
  std::string s = frame(title, x_label, y_label, xmax, ymax);
  const int x1 = kW - kR, y1 = kH - kB;
  for (size_t k = 0; k < series.size(); ++k) {
    for (size_t i = 0; i < series[k].x.size(); ++i) {
      const double px = kL + (x1 - kL) * series[k].x[i] / xmax;
      const double py = y1 - (y1 - kT) * series[k].y[i] / ymax;
      s += "<circle cx=\"" + f2(px) + "\" cy=\"" + f2(py) + "\" r=\"5\" fill=\"" + kColors[k % 10] +
           "\"/>";
    }
    s += legend(k, series[k].label);
  }
  return s + "</svg>";
}

std::string cdf_svg(const std::string& title, const std::string& x_label,
                    const std::vector<Series>& series) {
  double xmax = 0;
  for (const auto& se : series)
    for (double x : se.x)
      if (std::isfinite(x)) xmax = std::max(xmax, x);
  xmax = nice_max(xmax);
  std::string s = frame(title, x_label, "fraction of runs done", xmax, 1.0);
  const int x1 = kW - kR, y1 = kH - kB;
  for (size_t k = 0; k < series.size(); ++k) {
    std::vector<double> v = series[k].x;
    std::sort(v.begin(), v.end());
    std::string pts;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!std::isfinite(v[i])) break;
      const double px = kL + (x1 - kL) * v[i] / xmax;
      const double f = static_cast<double>(i + 1) / static_cast<double>(v.size());
      pts += f2(px) + "," + f2(y1 - (y1 - kT) * f) + " ";
    }
    s += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" + std::string(kColors[k % 10]) +
         "\" points=\"" + pts + "\"/>";
    s += legend(k, series[k].label);
  }
  return s + "</svg>";
}

std::string stacked_bars_svg(const std::string& title, const std::vector<std::string>& rows,
                             const std::vector<std::string>& parts,
                             const std::vector<std::vector<double>>& values,
                             const std::string& unit) {
  double xmax = 0;
  for (const auto& r : values) {
    double t = 0;
    for (double v : r)
      t += v;
    xmax = std::max(xmax, t);
  }
  xmax = nice_max(xmax);
  const int bar = 18, gap = 8;
  const int h = std::max(kT + static_cast<int>(rows.size()) * (bar + gap) + kB,
                         kT + 14 * static_cast<int>(parts.size()) + 10);
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kW) +
                  "\" height=\"" + std::to_string(h) +
                  "\"><rect width=\"100%\" height=\"100%\" "
                  "fill=\"white\"/><text x=\"" +
                  std::to_string(kW / 2) + "\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">" +
                  escape(title) + "</text>";
  const int x0 = 250, x1 = kW - kR;
  for (size_t r = 0; r < rows.size(); ++r) {
    const int y = kT + static_cast<int>(r) * (bar + gap);
    s += "<text x=\"" + std::to_string(x0 - 4) + "\" y=\"" + std::to_string(y + 13) +
         "\" text-anchor=\"end\" font-size=\"10\">" + escape(rows[r]) + "</text>";
    double acc = 0;
    for (size_t p = 0; p < values[r].size(); ++p) {
      const double w = (x1 - x0) * values[r][p] / xmax;
      s += "<rect x=\"" + f2(x0 + (x1 - x0) * acc / xmax) + "\" y=\"" + std::to_string(y) +
           "\" width=\"" + f2(w) + "\" height=\"" + std::to_string(bar) + "\" fill=\"" +
           kColors[p % 10] + "\"/>";
      acc += values[r][p];
    }
  }
  for (size_t p = 0; p < parts.size(); ++p)
    s += legend(p, parts[p]);
  s += "<text x=\"" + std::to_string((x0 + x1) / 2) + "\" y=\"" + std::to_string(h - 10) +
       "\" text-anchor=\"middle\" font-size=\"12\">" + escape(unit) + " (max " + g4(xmax) +
       ")</text>";
  return s + "</svg>";
}

std::string line_svg(const std::string& title, const std::string& x_label,
                     const std::string& y_label, const std::vector<Series>& series,
                     const std::vector<Mark>& marks, bool log_x, bool y_from_zero) {
  double xmax = 0, ymax = 0;
  for (const auto& se : series)
    for (size_t i = 0; i < se.x.size() && i < se.y.size(); ++i)
      if (std::isfinite(se.x[i]) && std::isfinite(se.y[i]))
        xmax = std::max(xmax, se.x[i]), ymax = std::max(ymax, se.y[i]);
  double ymin = ymax;
  for (const auto& se : series)
    for (size_t i = 0; i < se.x.size() && i < se.y.size(); ++i)
      if (std::isfinite(se.x[i]) && std::isfinite(se.y[i])) ymin = std::min(ymin, se.y[i]);
  double xmin = xmax;
  for (const auto& se : series)
    for (size_t i = 0; i < se.x.size() && i < se.y.size(); ++i)
      if (std::isfinite(se.x[i]) && std::isfinite(se.y[i]) && se.x[i] > 0)
        xmin = std::min(xmin, se.x[i]);
  for (const auto& m : marks)
    if (std::isfinite(m.x)) xmax = std::max(xmax, m.x), xmin = std::min(xmin, m.x);
  log_x = log_x && xmin > 0 && xmax > xmin;
  if (log_x) {
    xmin /= 1.1, xmax *= 1.1;
  } else {
    xmin = 0, xmax = nice_max(xmax);
  }
  const int x1 = kW - kR, y1 = kH - kB;
  auto xpos = [&](double x) {
    const double f = log_x ? std::log(x / xmin) / std::log(xmax / xmin) : x / xmax;
    return kL + (x1 - kL) * f;
  };
  // The y axis spans the data (padded by 5 %), starting at 0 only when the data come close.
  const double span = ymax - ymin;
  ymin = y_from_zero || ymin - 0.05 * span < 0.3 * ymax || span <= 0 ? 0 : ymin - 0.05 * span;
  ymax = ymin == 0 ? nice_max(ymax) : ymax + 0.05 * span;
  std::string s = frame(title, x_label + (log_x ? " (log scale)" : ""), y_label, xmax, ymax, ymin,
                        log_x ? xmin : 0);
  for (size_t k = 0; k < series.size(); ++k) {
    std::string pts, dots;
    for (size_t i = 0; i < series[k].x.size() && i < series[k].y.size(); ++i) {
      if (!std::isfinite(series[k].x[i]) || !std::isfinite(series[k].y[i])) continue;
      if (log_x && !(series[k].x[i] > 0)) continue;
      const double px = xpos(series[k].x[i]);
      const double py = y1 - (y1 - kT) * (series[k].y[i] - ymin) / (ymax - ymin);
      pts += f2(px) + "," + f2(py) + " ";
      dots += "<circle cx=\"" + f2(px) + "\" cy=\"" + f2(py) + "\" r=\"3\" fill=\"" +
              kColors[k % 10] + "\"/>";
    }
    s += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" + std::string(kColors[k % 10]) +
         "\" points=\"" + pts + "\"/>" + dots;
    s += legend(k, series[k].label);
  }
  for (size_t k = 0; k < marks.size(); ++k) {
    const Mark& m = marks[k];
    if (!std::isfinite(m.x) || (log_x && !(m.x > 0))) continue;
    const double px = xpos(m.x);
    s += "<line x1=\"" + f2(px) + "\" y1=\"" + std::to_string(kT) + "\" x2=\"" + f2(px) +
         "\" y2=\"" + std::to_string(y1) + "\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>";
    s += "<text x=\"" + f2(px + 3) + "\" y=\"" +
         std::to_string(kT + 10 + 12 * static_cast<int>(k)) + "\" font-size=\"10\" fill=\"#555\">" +
         escape(m.label) + "</text>";
  }
  return s + "</svg>";
}

std::string heatmap_svg(const std::string& title, const std::string& x_label,
                        const std::string& y_label,
                        const std::vector<std::vector<double>>& values) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  size_t cols = 0;
  for (const auto& r : values) {
    cols = std::max(cols, r.size());
    for (double v : r)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (!(lo <= hi)) lo = hi = 0;
  const size_t rows = values.size();
  const int pw = kW - kL - kR, ph = kH - kT - kB;
  const double cw = cols > 0 ? static_cast<double>(pw) / static_cast<double>(cols) : pw;
  const double ch = rows > 0 ? static_cast<double>(ph) / static_cast<double>(rows) : ph;
  std::string s = frame(title, x_label, y_label, static_cast<double>(cols), 0);
  auto color = [&](double v) {
    // White (minimum) to dark blue (maximum).
    const double f = hi > lo ? (v - lo) / (hi - lo) : 0.5;
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(255 - f * (255 - 8)),
                  static_cast<int>(255 - f * (255 - 48)), static_cast<int>(255 - f * (255 - 107)));
    return std::string(buf);
  };
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < values[r].size(); ++c) {
      if (!std::isfinite(values[r][c])) continue;
      s += "<rect x=\"" + f2(kL + cw * static_cast<double>(c)) + "\" y=\"" +
           f2(kT + ch * static_cast<double>(r)) + "\" width=\"" + f2(cw) + "\" height=\"" + f2(ch) +
           "\" fill=\"" + color(values[r][c]) + "\"/>";
    }
  }
  // Row ticks (first and last) and the colour scale.
  if (rows > 0) {
    s += "<text x=\"" + std::to_string(kL - 4) + "\" y=\"" + f2(kT + ch / 2 + 3) +
         "\" text-anchor=\"end\" font-size=\"10\">0</text>";
    s += "<text x=\"" + std::to_string(kL - 4) + "\" y=\"" +
         f2(kT + ch * static_cast<double>(rows - 1) + ch / 2 + 3) +
         "\" text-anchor=\"end\" font-size=\"10\">" + std::to_string(rows - 1) + "</text>";
  }
  const int sx = kW - kR + 20;
  for (int i = 0; i < 10; ++i) {
    const double v = hi - (hi - lo) * i / 9.0;
    s += "<rect x=\"" + std::to_string(sx) + "\" y=\"" + std::to_string(kT + 20 * i) +
         "\" width=\"16\" height=\"20\" fill=\"" + color(v) + "\" stroke=\"#ccc\"/>";
  }
  s += "<text x=\"" + std::to_string(sx + 22) + "\" y=\"" + std::to_string(kT + 10) +
       "\" font-size=\"10\">" + g4(hi) + "</text>";
  s += "<text x=\"" + std::to_string(sx + 22) + "\" y=\"" + std::to_string(kT + 195) +
       "\" font-size=\"10\">" + g4(lo) + "</text>";
  return s + "</svg>";
}

std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  std::string s = "<table><tr>";
  for (const auto& h : header)
    s += "<th>" + escape(h) + "</th>";
  s += "</tr>\n";
  for (const auto& r : rows) {
    s += "<tr>";
    for (const auto& c : r)
      s += "<td>" + escape(c) + "</td>";
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
         escape(title) +
         "</title><style>body{font-family:sans-serif;margin:2em;max-width:1100px}"
         "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;"
         "padding:2px 6px}svg{display:block;margin:1em 0}</style></head><body>\n" +
         body + "\n</body></html>\n";
}

}  // namespace fleetsim::html

namespace fleetsim {

namespace {

using namespace html;

std::string candidate_label(const CandidateResult& c) {
  return c.system + " ×" + std::to_string(c.count) + " " + c.parallelism;
}

// "<what>: 512 × p6-b200.48xlarge (4096 GPUs, tp8 pp8 vp8), 109 days, $155.0M", or "none".
std::string recommendation_html(const PlanResult& r, const char* what, int idx) {
  std::string out = "<p><b>" + std::string(what) + ":</b> ";
  if (idx < 0) return out + "none of the candidates qualifies.</p>\n";
  const auto& c = r.candidates[idx];
  char buf[256];
  std::snprintf(buf, sizeof buf, "%d × %s (%d GPUs, %s), %d days, %s", c.count, c.system.c_str(),
                c.gpus, c.parallelism.c_str(), c.days, format_usd(c.cost_usd).c_str());
  return out + escape(buf) + "</p>\n";
}

// Cost against days reserved (feasible candidates) and the time-to-train CDFs.
std::string cost_and_time_to_train_html(const PlanResult& r) {
  std::vector<Series> cost, ttt;
  for (const auto& c : r.candidates) {
    const std::string label = candidate_label(c);
    if (c.status == CandidateStatus::kOk) {
      cost.push_back({label, {static_cast<double>(c.days)}, {c.cost_usd}});
    }
    if (!c.finish_days.empty()) ttt.push_back({label, c.finish_days, {}});
  }
  double max_cost = 0;
  for (const auto& se : cost)
    max_cost = std::max(max_cost, se.y[0]);
  const bool millions = max_cost >= 1e6;
  for (auto& se : cost)
    se.y[0] /= millions ? 1e6 : 1e3;
  std::string body =
      "<h2>Cost vs days reserved</h2>\n" +
      scatter_svg("Cost vs days (P" + std::to_string(static_cast<int>(r.confidence * 100)) + ")",
                  "days reserved", millions ? "cost (million USD)" : "cost (thousand USD)", cost);
  body += "<h2>Time-to-train distribution</h2>\n" +
          cdf_svg("Time to train (final checkpoint included)", "days", ttt);
  return body;
}

// Scaling: aggregate throughput against GPUs, one line per (type, parallelism), over the
// candidates that fit in memory.
std::string scaling_html(const PlanResult& r) {
  std::vector<Series> scaling;
  for (const auto& c : r.candidates) {
    if (c.status != CandidateStatus::kOk && c.status != CandidateStatus::kDoesNotFinish) continue;
    const std::string label = c.system + " " + c.parallelism;
    auto it = std::find_if(scaling.begin(), scaling.end(),
                           [&](const Series& se) { return se.label == label; });
    if (it == scaling.end()) it = scaling.insert(scaling.end(), Series{label, {}, {}});
    it->x.push_back(c.gpus);
    it->y.push_back(c.tokens_per_s_per_gpu * c.gpus / 1e6);
  }
  for (auto& se : scaling) {  // by GPU count
    std::vector<size_t> idx(se.x.size());
    for (size_t i = 0; i < idx.size(); ++i)
      idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return se.x[a] < se.x[b]; });
    Series sorted{se.label, {}, {}};
    for (size_t i : idx)
      sorted.x.push_back(se.x[i]), sorted.y.push_back(se.y[i]);
    se = sorted;
  }
  return "<h2>Throughput vs instance count</h2>\n" +
         line_svg("Healthy throughput (candidates that fit in memory)", "GPUs", "million tokens/s",
                  scaling, {}, false, /*y_from_zero=*/true);
}

// Step-time breakdown bars of every candidate that was simulated.
std::string breakdown_html(const PlanResult& r) {
  std::vector<std::string> rows;
  std::vector<std::vector<double>> bars;
  for (const auto& c : r.candidates) {
    if (c.status != CandidateStatus::kInvalid) {
      rows.push_back(candidate_label(c));
      bars.push_back({c.compute_s, c.exposed_comm_s, c.bubble_s, c.other_s});
    }
  }
  return "<h2>Step-time breakdown</h2>\n" +
         stacked_bars_svg("Step time", rows, {"compute", "exposed comm", "bubble", "other"}, bars);
}

// ETTR vs checkpoint interval: the recommendations first, then other feasible candidates.
std::string ettr_html(const PlanResult& r) {
  std::vector<int> order;
  for (int idx : {r.cheapest, r.fastest})
    if (idx >= 0 && std::find(order.begin(), order.end(), idx) == order.end()) order.push_back(idx);
  for (size_t i = 0; i < r.candidates.size() && order.size() < 8; ++i)
    if (!r.candidates[i].ettr_curve.points.empty() &&
        std::find(order.begin(), order.end(), static_cast<int>(i)) == order.end())
      order.push_back(static_cast<int>(i));
  if (order.empty()) return "";
  std::vector<Series> ettr;
  std::vector<Mark> marks;
  for (int idx : order) {
    const auto& c = r.candidates[idx];
    Series se{candidate_label(c), {}, {}};
    for (const auto& pt : c.ettr_curve.points)
      se.x.push_back(pt.interval_s / 60), se.y.push_back(pt.ettr_mean);
    ettr.push_back(se);
  }
  const auto& c = r.candidates[order.front()];
  if (c.ettr_curve.auto_s > 0)
    marks.push_back({"auto (Daly) #" + std::to_string(order.front()), c.ettr_curve.auto_s / 60});
  if (c.ettr_curve.configured_s > 0)
    marks.push_back({"plan's interval", c.ettr_curve.configured_s / 60});
  return "<h2>ETTR vs checkpoint interval</h2>\n" + line_svg("Mean ETTR vs checkpoint interval",
                                                             "checkpoint interval (minutes)",
                                                             "ETTR", ettr, marks, true);
}

// MoE load of the recommended (else the first simulated) candidate.
std::string moe_html(const PlanResult& r) {
  int moe_idx = r.cheapest >= 0 && !r.candidates[r.cheapest].moe_heatmap.empty() ? r.cheapest : -1;
  for (size_t i = 0; i < r.candidates.size() && moe_idx < 0; ++i)
    if (!r.candidates[i].moe_heatmap.empty()) moe_idx = static_cast<int>(i);
  if (moe_idx < 0) return "";
  const auto& c = r.candidates[moe_idx];
  return "<h2>MoE load</h2>\n" +
         heatmap_svg("Tokens per EP rank per micro-batch: " + c.system + " ×" +
                         std::to_string(c.count) + " " + c.parallelism,
                     "EP rank", "MoE layer", c.moe_heatmap);
}

}  // namespace

std::string plan_html(const PlanResult& r) {
  using namespace html;
  std::string body = "<h1>Capacity plan: " + escape(r.name) + "</h1>\n";
  body += recommendation_html(r, "Cheapest meeting the deadline", r.cheapest);
  body += recommendation_html(r, "Fastest within the budget", r.fastest);
  body += cost_and_time_to_train_html(r);
  body += scaling_html(r);
  body += breakdown_html(r);
  body += ettr_html(r);
  body += moe_html(r);
  body += "<h2>Candidates</h2>\n<pre>" + escape(plan_table(r)) + "</pre>\n";
  return page("fleetsim plan: " + r.name, body);
}

}  // namespace fleetsim

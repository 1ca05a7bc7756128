// Inline SVG charts and the HTML page around them (html.h), plus the capacity-plan page.
#include "report/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/plan_report.h"

namespace fleetsim::html {

namespace {

constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr int kW = 640, kH = 360, kL = 70, kR = 180, kT = 30, kB = 45;

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
                  double xmax, double ymax) {
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
         "\" text-anchor=\"middle\" font-size=\"10\">" + g4(xmax * t / 4) + "</text>";
    if (ymax > 0)
      s += "<text x=\"" + std::to_string(kL - 4) + "\" y=\"" + f2(fy + 3) +
           "\" text-anchor=\"end\" font-size=\"10\">" + g4(ymax * t / 4) + "</text>";
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
                             const std::vector<std::vector<double>>& values) {
  double xmax = 0;
  for (const auto& r : values) {
    double t = 0;
    for (double v : r)
      t += v;
    xmax = std::max(xmax, t);
  }
  xmax = nice_max(xmax);
  const int bar = 18, gap = 8;
  const int h = kT + static_cast<int>(rows.size()) * (bar + gap) + kB;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kW) +
                  "\" height=\"" + std::to_string(h) +
                  "\"><rect width=\"100%\" height=\"100%\" "
                  "fill=\"white\"/><text x=\"" +
                  std::to_string(kW / 2) + "\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">" +
                  escape(title) + "</text>";
  const int x0 = 160, x1 = kW - kR;
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
       "\" text-anchor=\"middle\" font-size=\"12\">seconds per step (max " + g4(xmax) + ")</text>";
  return s + "</svg>";
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

std::string plan_html(const PlanResult& r) {
  using namespace html;
  std::string body = "<h1>Capacity plan: " + escape(r.name) + "</h1>\n";
  auto rec = [&](const char* what, int idx) {
    body += "<p><b>" + std::string(what) + ":</b> ";
    if (idx < 0) {
      body += "none of the candidates qualifies.</p>\n";
      return;
    }
    const auto& c = r.candidates[idx];
    char buf[256];
    std::snprintf(buf, sizeof buf, "%d × %s (%d GPUs, %s), %d days, $%.2fM</p>\n", c.count,
                  c.system.c_str(), c.gpus, c.parallelism.c_str(), c.days, c.cost_usd / 1e6);
    body += escape(buf);
  };
  rec("Cheapest meeting the deadline", r.cheapest);
  rec("Fastest within the budget", r.fastest);
  std::vector<Series> cost, ttt;
  std::vector<std::string> rows;
  std::vector<std::vector<double>> bars;
  for (const auto& c : r.candidates) {
    const std::string label = c.system + " ×" + std::to_string(c.count) + " " + c.parallelism;
    if (c.status == CandidateStatus::kOk) {
      cost.push_back({label, {static_cast<double>(c.days)}, {c.cost_usd / 1e6}});
    }
    if (!c.finish_days.empty()) ttt.push_back({label, c.finish_days, {}});
    if (c.status != CandidateStatus::kInvalid) {
      rows.push_back(label);
      bars.push_back({c.compute_s, c.exposed_comm_s, c.bubble_s, c.other_s});
    }
  }
  body +=
      "<h2>Cost vs days reserved</h2>\n" +
      scatter_svg("Cost vs days (P" + std::to_string(static_cast<int>(r.confidence * 100)) + ")",
                  "days reserved", "cost (million USD)", cost);
  body += "<h2>Time-to-train distribution</h2>\n" +
          cdf_svg("Time to train (final checkpoint included)", "days", ttt);
  body += "<h2>Step-time breakdown</h2>\n" +
          stacked_bars_svg("Step time", rows, {"compute", "exposed comm", "bubble", "other"}, bars);
  body += "<h2>Candidates</h2>\n<pre>" + escape(plan_table(r)) + "</pre>\n";
  return page("fleetsim plan: " + r.name, body);
}

}  // namespace fleetsim

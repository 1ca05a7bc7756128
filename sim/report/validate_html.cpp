// The validation page (validate_html.h): log–log scatter with error bands, error histogram,
// per-family / per-system tables and the row table, drawn with fixed number formats so the same
// report gives the same bytes.
#include "report/validate_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "report/html.h"

namespace fleetsim {
namespace {

constexpr int kW = 820, kH = 420, kL = 70, kR = 230, kT = 30, kB = 45;

std::string f2(double v) {
  return html::fixed2(v);
}

std::string g3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string pct(double v, bool sign = false) {
  char buf[32];
  std::snprintf(buf, sizeof buf, sign ? "%+.1f %%" : "%.1f %%", v);
  return buf;
}

std::string family_of(const ValidationRow& v) {
  return v.training ? (v.family.empty() ? v.model : v.family) : v.model;
}

std::string svg_open(const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kW) +
         "\" height=\"" + std::to_string(kH) + "\" viewBox=\"0 0 " + std::to_string(kW) + " " +
         std::to_string(kH) + "\"><rect width=\"100%\" height=\"100%\" fill=\"white\"/>" +
         "<text x=\"" + std::to_string((kW - kR) / 2) + "\" y=\"18\" text-anchor=\"middle\" " +
         "font-size=\"14\">" + html::escape(title) + "</text>";
}

std::string text(double x, double y, const std::string& s, const char* anchor = "middle",
                 int size = 10) {
  return "<text x=\"" + f2(x) + "\" y=\"" + f2(y) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"" + std::to_string(size) + "\">" + html::escape(s) + "</text>";
}

std::string line(double x1, double y1, double x2, double y2, const char* stroke,
                 const char* extra = "") {
  return "<line x1=\"" + f2(x1) + "\" y1=\"" + f2(y1) + "\" x2=\"" + f2(x2) + "\" y2=\"" + f2(y2) +
         "\" stroke=\"" + stroke + "\"" + extra + "/>";
}

// Predicted vs measured, both axes log10 over the same decade range; the diagonal and the
// ±10 % / ±25 % bands are the lines y = x·(1 ± e).
std::string scatter(const ValidationReport& rep, const std::vector<std::string>& families) {
  double lo = 1e300, hi = 0;
  for (const auto& v : rep.rows) {
    if (v.skipped || v.measured <= 0 || v.predicted <= 0) continue;
    lo = std::min({lo, v.measured, v.predicted});
    hi = std::max({hi, v.measured, v.predicted});
  }
  std::string s = svg_open("Predicted vs measured (log-log, each row in its own unit)");
  if (hi <= 0) return s + text(kW / 2.0, kH / 2.0, "no compared rows") + "</svg>";
  const double d0 = std::floor(std::log10(lo)), d1 = std::max(d0 + 1, std::ceil(std::log10(hi)));
  const double x0 = kL, x1 = kW - kR, y0 = kH - kB, y1 = kT;
  auto px = [&](double v) { return x0 + (x1 - x0) * (std::log10(v) - d0) / (d1 - d0); };
  auto py = [&](double v) { return y0 - (y0 - y1) * (std::log10(v) - d0) / (d1 - d0); };
  s += line(x0, y0, x1, y0, "black") + line(x0, y0, x0, y1, "black");
  for (double d = d0; d <= d1; d += 1) {
    const double v = std::pow(10.0, d);
    s += text(px(v), y0 + 15, g3(v)) + text(x0 - 4, py(v) + 3, g3(v), "end");
    s += line(px(v), y0, px(v), y1, "#eee") + line(x0, py(v), x1, py(v), "#eee");
  }
  s += text((x0 + x1) / 2, kH - 8, "measured", "middle", 12);
  s += "<text x=\"14\" y=\"" + f2((y0 + y1) / 2) + "\" text-anchor=\"middle\" font-size=\"12\" " +
       "transform=\"rotate(-90 14 " + f2((y0 + y1) / 2) + ")\">predicted</text>";
  const double a = std::pow(10.0, d0), b = std::pow(10.0, d1);
  auto band = [&](double f, const char* color, const char* dash) {
    // y = f·x, clipped to the plot square.
    const double xa = std::max(a, a / f), xb = std::min(b, b / f);
    return line(px(xa), py(xa * f), px(xb), py(xb * f), color,
                (std::string(" stroke-dasharray=\"") + dash + "\"").c_str());
  };
  s += band(1.0, "black", "none") + band(1.10, "#2ca02c", "4 3") + band(0.90, "#2ca02c", "4 3") +
       band(1.25, "#d62728", "2 3") + band(0.75, "#d62728", "2 3");
  for (size_t k = 0; k < families.size(); ++k) {
    const std::string c = html::series_color(static_cast<int>(k));
    for (const auto& v : rep.rows) {
      if (v.skipped || v.measured <= 0 || v.predicted <= 0 || family_of(v) != families[k]) continue;
      // Past ten families the colours repeat as rings.
      s += "<circle cx=\"" + f2(px(v.measured)) + "\" cy=\"" + f2(py(v.predicted)) + "\" r=\"4\" " +
           (k < 10 ? "fill=\"" + c + "\" fill-opacity=\"0.8\"/>"
                   : "fill=\"white\" stroke=\"" + c + "\" stroke-width=\"2\"/>");
    }
    const double ly = kT + 14.0 * static_cast<double>(k);
    s += "<rect x=\"" + std::to_string(kW - kR + 10) + "\" y=\"" + f2(ly) +
         "\" width=\"10\" height=\"10\" " +
         (k < 10 ? "fill=\"" + c + "\"/>"
                 : "fill=\"white\" stroke=\"" + c + "\" stroke-width=\"2\"/>") +
         text(kW - kR + 24, ly + 9, families[k], "start");
  }
  const double ly = kT + 14.0 * static_cast<double>(families.size()) + 10;
  s += line(kW - kR + 10, ly, kW - kR + 22, ly, "#2ca02c", " stroke-dasharray=\"4 3\"") +
       text(kW - kR + 26, ly + 3, "±10 %", "start");
  s += line(kW - kR + 10, ly + 14, kW - kR + 22, ly + 14, "#d62728", " stroke-dasharray=\"2 3\"") +
       text(kW - kR + 26, ly + 17, "±25 %", "start");
  return s + "</svg>";
}

// Signed errors in 5 % bins from −50 % to +50 %, with one bin below and one above.
std::string histogram(const ValidationReport& rep) {
  constexpr int kBins = 22;
  int count[kBins] = {};
  for (const auto& v : rep.rows) {
    if (v.skipped) continue;
    const int b = v.error_pct < -50   ? 0
                  : v.error_pct >= 50 ? kBins - 1
                                      : 1 + static_cast<int>(std::floor((v.error_pct + 50) / 5));
    ++count[std::clamp(b, 0, kBins - 1)];
  }
  const int top = std::max(1, *std::max_element(count, count + kBins));
  std::string s = svg_open("Error of compared rows: (predicted − measured) / measured");
  const double x0 = kL, x1 = kW - kR, y0 = kH - kB, y1 = kT;
  s += line(x0, y0, x1, y0, "black") + line(x0, y0, x0, y1, "black");
  const double w = (x1 - x0) / kBins;
  for (int i = 0; i < kBins; ++i) {
    const double h = (y0 - y1) * count[i] / top;
    s += "<rect x=\"" + f2(x0 + i * w + 1) + "\" y=\"" + f2(y0 - h) + "\" width=\"" + f2(w - 2) +
         "\" height=\"" + f2(h) + "\" fill=\"" +
         html::series_color(std::abs(i - kBins / 2) <= 2 ? 2 : 0) + "\"/>";
    if (count[i] > 0) s += text(x0 + (i + 0.5) * w, y0 - h - 3, std::to_string(count[i]));
  }
  for (int e = -50; e <= 50; e += 25)
    s += text(x0 + w * (1 + (e + 50) / 5.0), y0 + 15, std::to_string(e) + " %");
  s += text(x0 + w * 0.5, y0 + 28, "< −50") + text(x1 - w * 0.5, y0 + 28, "≥ 50");
  s += text(x0 - 4, y1 + 8, std::to_string(top), "end") + text(x0 - 4, y0, "0", "end");
  s += text((x0 + x1) / 2, kH - 4, "signed error, 5 % bins", "middle", 12);
  return s + "</svg>";
}

std::string group_table(const ValidationReport& rep, const char* what, bool by_system) {
  std::map<std::string, std::vector<double>> errs;
  for (const auto& v : rep.rows) {
    if (v.skipped) continue;
    errs[by_system ? (v.system.empty() ? v.hardware : v.system) : family_of(v)].push_back(
        v.error_pct);
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& [k, e] : errs) {
    double abs_sum = 0, sum = 0;
    for (double x : e)
      abs_sum += std::fabs(x), sum += x;
    const double n = static_cast<double>(e.size());
    rows.push_back({k, std::to_string(e.size()), pct(abs_sum / n), pct(sum / n, true)});
  }
  return html::table({what, "rows", "MAPE", "mean signed error"}, rows);
}

std::string row_table(const ValidationReport& rep) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& v : rep.rows) {
    const std::string status = v.error     ? "error: " + v.reason
                               : v.skipped ? "skipped: " + v.reason
                                           : "compared";
    const bool have = !v.skipped;
    rows.push_back({std::to_string(v.line), v.hardware, v.system, std::to_string(v.num_gpus),
                    v.model, v.metric + (v.unit.empty() ? "" : " [" + v.unit + "]"), v.config,
                    have ? g3(v.measured) : "", have ? g3(v.predicted) : "",
                    have ? pct(v.error_pct, true) : "", status,
                    v.notes + (v.defaults.empty() ? "" : " defaults: " + v.defaults)});
  }
  return html::table({"line", "hardware", "system", "GPUs", "model", "metric", "configuration",
                      "measured", "predicted", "error", "status", "notes"},
                     rows);
}

}  // namespace

std::string validation_html(const ValidationReport& rep) {
  std::vector<std::string> families;
  for (const auto& v : rep.rows) {
    if (!v.skipped && std::find(families.begin(), families.end(), family_of(v)) == families.end())
      families.push_back(family_of(v));
  }
  std::sort(families.begin(), families.end());
  char summary[512], small[128] = "";
  if (rep.n_small > 0)
    std::snprintf(small, sizeof small,
                  "; collective messages below 1 MiB apart: %.2f %% over %d rows",
                  rep.mape_small_pct, rep.n_small);
  std::snprintf(summary, sizeof summary,
                "MAPE %.2f %% over %d rows (worst row %.1f %%)%s; %d rows skipped with the reason; "
                "%d malformed.",
                rep.mape_pct, rep.n_rows, rep.max_abs_error_pct, small, rep.n_skipped,
                rep.n_errors);
  std::string body = "<h1>fleetsim validate</h1>\n<p>Reference: " + html::escape(rep.reference) +
                     "</p>\n<p>" + html::escape(summary) + "</p>\n";
  body += "<h2>Predicted vs measured</h2>\n" + scatter(rep, families) + "\n";
  body += "<h2>Error distribution</h2>\n" + histogram(rep) + "\n";
  body += "<h2>By model family</h2>\n" + group_table(rep, "family", false);
  body += "<h2>By system</h2>\n" + group_table(rep, "system", true);
  body += "<h2>Rows</h2>\n" + row_table(rep);
  return html::page("fleetsim validate: " + rep.reference, body);
}

}  // namespace fleetsim

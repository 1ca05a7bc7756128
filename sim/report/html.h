// Self-contained HTML reports: inline SVG charts and inline CSS, no scripts and no network
// access needed to view them. Charts are drawn from the numbers in fixed formats, so the same
// input gives the same bytes.
#pragma once

#include <string>
#include <vector>

namespace fleetsim::html {

struct Series {
  std::string label;
  std::vector<double> x, y;
};

// Scatter chart (points with labels); axes from 0 to the data maximum.
std::string scatter_svg(const std::string& title, const std::string& x_label,
                        const std::string& y_label, const std::vector<Series>& series);
// Empirical CDFs (one line per series over its finite x values).
std::string cdf_svg(const std::string& title, const std::string& x_label,
                    const std::vector<Series>& series);
// Lines through the points of each series (x sorted by the caller), with a marker per point;
// x from 0 (or, with log_x, logarithmic over the data), y over the data (from 0 when the data
// come close to it, or always with y_from_zero). `marks` draws labelled vertical lines (e.g. an
// optimum).
struct Mark {
  std::string label;
  double x = 0;
};
std::string line_svg(const std::string& title, const std::string& x_label,
                     const std::string& y_label, const std::vector<Series>& series,
                     const std::vector<Mark>& marks = {}, bool log_x = false,
                     bool y_from_zero = false);
// Horizontal stacked bars: one bar per row, one segment per part; `unit` labels the axis.
std::string stacked_bars_svg(const std::string& title, const std::vector<std::string>& rows,
                             const std::vector<std::string>& parts,
                             const std::vector<std::vector<double>>& values,
                             const std::string& unit = "seconds per step");
// Heatmap of values[row][column] on a white-to-dark colour ramp from the minimum to the
// maximum, with the scale printed beside it.
std::string heatmap_svg(const std::string& title, const std::string& x_label,
                        const std::string& y_label, const std::vector<std::vector<double>>& values);
// A small HTML table (cells are escaped).
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows);
std::string escape(const std::string& s);
// The charts' series colours (10, cycling) and the fixed two-decimal number SVG coordinates use.
const char* series_color(int k);
std::string fixed2(double v);
// A complete page around `body` (HTML fragments).
std::string page(const std::string& title, const std::string& body);

}  // namespace fleetsim::html

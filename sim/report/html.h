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
// Horizontal stacked bars: one bar per row, one segment per part.
std::string stacked_bars_svg(const std::string& title, const std::vector<std::string>& rows,
                             const std::vector<std::string>& parts,
                             const std::vector<std::vector<double>>& values);
std::string escape(const std::string& s);
// A complete page around `body` (HTML fragments).
std::string page(const std::string& title, const std::string& body);

}  // namespace fleetsim::html

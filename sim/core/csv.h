// RFC 4180 CSV reader shared by every table fleetsim reads (reference measurements, calibration
// tables, routing histograms).
#pragma once

#include <string>
#include <vector>

namespace fleetsim {

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> line_of_row;  // 1-based line number of each row's first line
  int header_line = 1;           // 1-based line number of the header

  // Index of a column by name, or -1.
  int column(const std::string& name) const;
};

// RFC 4180 CSV (quoted fields, doubled quotes, newlines inside quotes). Throws InputError
// naming the file and line on malformed input. `first_line` is the file line `text` starts on.
CsvTable parse_csv(const std::string& text, const std::string& file, int first_line = 1);

// The same after leading '#' comment lines (the source notes of calibration and reference
// tables); line numbers (header_line, line_of_row, errors) stay those of the whole file.
CsvTable parse_csv_after_comments(const std::string& text, const std::string& file);

// Reads a whole file (InputError naming the file if it cannot be read or exceeds `max_bytes`).
std::string read_text_file(const std::string& path, size_t max_bytes = 64u << 20);

}  // namespace fleetsim

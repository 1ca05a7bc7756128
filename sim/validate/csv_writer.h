// RFC 4180 output (the reader is sim/core/csv.h): quotes a field when it holds a comma, a quote
// or a line break, doubling the quotes.
#pragma once

#include <string>
#include <vector>

namespace fleetsim {

inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

inline std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i)
    out += (i ? "," : "") + csv_field(fields[i]);
  return out + "\n";
}

}  // namespace fleetsim

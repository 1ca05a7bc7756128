#include "core/csv.h"
#include "core/error.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fleetsim {

namespace {

// Offset of the first byte that does not belong to a well-formed UTF-8 sequence (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF), or npos.
size_t invalid_utf8_offset(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int extra = 0;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + extra >= text.size()) return i;  // truncated sequence
    for (int k = 1; k <= extra; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return i;
    }
    i += extra + 1;
  }
  return std::string::npos;
}

}  // namespace

CsvTable parse_csv(const std::string& text, const std::string& file, int first_line) {
  if (const size_t bad = invalid_utf8_offset(text); bad != std::string::npos) {
    const auto line =
        first_line +
        std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
    throw InputError(
        file, "line " + std::to_string(line),
        "not valid UTF-8 (byte " + std::to_string(bad) + "); expected a UTF-8 text file");
  }
  CsvTable t;
  t.header_line = first_line;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, field_started = false;
  int line = first_line, row_line = first_line;
  auto end_field = [&] {
    row.push_back(std::move(field));
    field.clear();
    field_started = false;
  };
  auto end_row = [&] {
    end_field();
    if (t.header.empty()) {
      t.header = std::move(row);
    } else if (!(row.size() == 1 && row[0].empty())) {
      if (row.size() != t.header.size()) {
        throw InputError(file, "line " + std::to_string(row_line),
                         "expected " + std::to_string(t.header.size()) + " fields, got " +
                             std::to_string(row.size()));
      }
      t.rows.push_back(std::move(row));
      t.line_of_row.push_back(row_line);
    }
    row.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\0') throw InputError(file, "line " + std::to_string(line), "NUL byte in CSV");
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && !field_started && field.empty()) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      end_field();
    } else if (c == '\n') {
      end_row();
      ++line;
      row_line = line;
    } else if (c == '\r') {
      continue;
    } else {
      field += c;
      field_started = true;
    }
  }
  if (quoted)
    throw InputError(file, "line " + std::to_string(row_line), "unterminated quoted field");
  if (!field.empty() || !row.empty()) end_row();
  if (t.header.empty())
    throw InputError(file, "line " + std::to_string(first_line),
                     "empty CSV: expected a header line");
  return t;
}

CsvTable parse_csv_after_comments(const std::string& text, const std::string& file) {
  size_t pos = 0;
  int comment_lines = 0;
  while (pos < text.size() && text[pos] == '#') {
    const size_t nl = text.find('\n', pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++comment_lines;
  }
  return parse_csv(text.substr(pos), file, comment_lines + 1);
}

int CsvTable::column(const std::string& name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

std::string read_text_file(const std::string& path, size_t max_bytes) {
  // Only regular files: a folder's "size" is not one, and a device or pipe (/dev/zero, a FIFO)
  // would be read without end.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw InputError(path, "",
                     std::filesystem::exists(path, ec)
                         ? "cannot read file: not a regular file (a folder, device or pipe)"
                         : "cannot read file: no such file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot open file");
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size < 0) throw InputError(path, "", "cannot read file");
  if (static_cast<size_t>(size) > max_bytes)
    throw InputError(path, "",
                     "file is " + std::to_string(static_cast<long long>(size)) +
                         " bytes; the limit is " + std::to_string(max_bytes) + " bytes");
  in.seekg(0, std::ios::beg);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace fleetsim

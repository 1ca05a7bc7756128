// Units parser: a decimal number (optionally with exponent) followed by an optional space and a
// unit from a fixed table. Multipliers are exact powers of 10 or 2; results are rounded to the
// nearest byte or picosecond.
#include "core/units.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace fleetsim {
namespace {

struct UnitEntry {
  std::string_view name;
  double factor;  // multiplier to bytes, bytes/s or picoseconds
};

constexpr double kKi = 1024.0;
constexpr std::array kSizeUnits = {
    UnitEntry{"B", 1.0},
    UnitEntry{"KB", 1e3},
    UnitEntry{"MB", 1e6},
    UnitEntry{"GB", 1e9},
    UnitEntry{"TB", 1e12},
    UnitEntry{"PB", 1e15},
    UnitEntry{"KiB", kKi},
    UnitEntry{"MiB", kKi* kKi},
    UnitEntry{"GiB", kKi* kKi* kKi},
    UnitEntry{"TiB", kKi* kKi* kKi* kKi},
    UnitEntry{"PiB", kKi* kKi* kKi* kKi* kKi},
};
constexpr std::array kBandwidthUnits = {
    UnitEntry{"bps", 1.0 / 8},
    UnitEntry{"Kbps", 1e3 / 8},
    UnitEntry{"Mbps", 1e6 / 8},
    UnitEntry{"Gbps", 1e9 / 8},
    UnitEntry{"Tbps", 1e12 / 8},
    UnitEntry{"bit/s", 1.0 / 8},
    UnitEntry{"Kbit/s", 1e3 / 8},
    UnitEntry{"Mbit/s", 1e6 / 8},
    UnitEntry{"Gbit/s", 1e9 / 8},
    UnitEntry{"Tbit/s", 1e12 / 8},
    UnitEntry{"B/s", 1.0},
    UnitEntry{"KB/s", 1e3},
    UnitEntry{"MB/s", 1e6},
    UnitEntry{"GB/s", 1e9},
    UnitEntry{"TB/s", 1e12},
    UnitEntry{"KiB/s", kKi},
    UnitEntry{"MiB/s", kKi* kKi},
    UnitEntry{"GiB/s", kKi* kKi* kKi},
    UnitEntry{"TiB/s", kKi* kKi* kKi* kKi},
    UnitEntry{"Bps", 1.0},
    UnitEntry{"KBps", 1e3},
    UnitEntry{"MBps", 1e6},
    UnitEntry{"GBps", 1e9},
    UnitEntry{"TBps", 1e12},
};
constexpr std::array kTimeUnits = {
    UnitEntry{"ps", 1.0},        UnitEntry{"ns", 1e3},    UnitEntry{"us", 1e6},
    UnitEntry{"\xC2\xB5s", 1e6}, UnitEntry{"ms", 1e9},    UnitEntry{"s", 1e12},
    UnitEntry{"min", 60e12},     UnitEntry{"h", 3600e12}, UnitEntry{"d", 86400e12},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

template <size_t N>
std::string unit_list(const std::array<UnitEntry, N>& units) {
  std::string out;
  for (const auto& u : units) {
    if (!out.empty()) out += ", ";
    out += u.name;
  }
  return out;
}

// Splits "12.5GiB" into 12.5 and "GiB". Returns false when no number leads the text.
bool split_number(std::string_view text, double* value, std::string_view* unit) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9')
      ++i;
    return i > start;
  };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  bool any = digits();
  if (i < text.size() && text[i] == '.') {
    ++i;
    any = digits() || any;
  }
  if (!any) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t save = i;
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) i = save;
  }
  std::string number(text.substr(0, i));
  char* end = nullptr;
  *value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size()) return false;
  *unit = trim(text.substr(i));
  return true;
}

template <size_t N>
std::optional<double> parse_with(std::string_view text, const std::array<UnitEntry, N>& units,
                                 std::string_view kind, std::string_view default_unit,
                                 std::string* error) {
  text = trim(text);
  double value = 0;
  std::string_view unit;
  auto fail = [&](const std::string& why) -> std::optional<double> {
    if (error) {
      *error = "expected a " + std::string(kind) + " such as '" +
               std::string(kind == "size"        ? "180GB"
                           : kind == "bandwidth" ? "400Gbps"
                                                 : "2.5us") +
               "' (units: " + unit_list(units) + ")" + (why.empty() ? "" : ", " + why);
    }
    return std::nullopt;
  };
  if (!split_number(text, &value, &unit)) return fail("got '" + std::string(text) + "'");
  if (!std::isfinite(value)) return fail("got a non-finite number");
  if (value < 0) return fail("got a negative value '" + std::string(text) + "'");
  if (unit.empty()) unit = default_unit;
  if (unit.empty()) return fail("got no unit in '" + std::string(text) + "'");
  for (const auto& u : units) {
    if (u.name == unit) {
      double r = value * u.factor;
      if (!std::isfinite(r) || r > 9.0e18)
        return fail("got a value too large '" + std::string(text) + "'");
      return r;
    }
  }
  return fail("got unknown unit '" + std::string(unit) + "'");
}

}  // namespace

std::optional<Bytes> parse_bytes(std::string_view text, std::string* error) {
  auto v = parse_with(text, kSizeUnits, "size", "B", error);
  if (!v) return std::nullopt;
  return Bytes(static_cast<int64_t>(std::llround(*v)));
}

std::optional<Bandwidth> parse_bandwidth(std::string_view text, std::string* error) {
  auto v = parse_with(text, kBandwidthUnits, "bandwidth", "", error);
  if (!v) return std::nullopt;
  return Bandwidth::bytes_per_second(*v);
}

std::optional<Time> parse_time(std::string_view text, std::string* error) {
  auto v = parse_with(text, kTimeUnits, "time", "", error);
  if (!v) return std::nullopt;
  return Time::from_ps(static_cast<int64_t>(std::llround(*v)));
}

std::string format_bytes(Bytes b) {
  static constexpr std::array<const char*, 6> kNames = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = b.as_double();
  size_t i = 0;
  while (i + 1 < kNames.size() && v >= 1024.0) {
    v /= 1024.0;
    ++i;
  }
  char buf[64];
  if (v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f %s", v, kNames[i]);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f %s", v, kNames[i]);
  }
  return buf;
}

std::string format_time(Time t) {
  if (t.is_infinite()) return "inf";
  char buf[64];
  const double ps = static_cast<double>(t.ps());
  if (ps < 1e3) {
    std::snprintf(buf, sizeof buf, "%.0f ps", ps);
  } else if (ps < 1e6) {
    std::snprintf(buf, sizeof buf, "%.2f ns", ps * 1e-3);
  } else if (ps < 1e9) {
    std::snprintf(buf, sizeof buf, "%.2f us", ps * 1e-6);
  } else if (ps < 1e12) {
    std::snprintf(buf, sizeof buf, "%.2f ms", ps * 1e-9);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f s", ps * 1e-12);
  }
  return buf;
}

std::string format_bandwidth(Bandwidth bw) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GB/s", bw.gbytes_per_second());
  return buf;
}

}  // namespace fleetsim

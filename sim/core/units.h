// Parser for quantities written with units in scenario and topology files.
//
//   sizes:      "180GB", "179GiB", "1.5 MiB", "8B", "4096" (plain bytes). Decimal prefixes
//               (K, M, G, T, P = 10^3..10^15) and binary ones (Ki, Mi, Gi, Ti, Pi = 2^10..2^50).
//   bandwidth:  bits per second "400Gbps", "3.2Tbps", "100 Mbit/s"; bytes per second "1.8TB/s",
//               "900GB/s", "50GiB/s", "63 GBps".
//   time:       "2.5us", "150ns", "1ps", "3ms", "1.5s", "30min", "12h", "2d" ("µs" accepted).
//
// Each parser returns std::nullopt and fills *error with what was expected when the text is not
// a finite, non-negative quantity of the right kind (negative values, NaN, overflow, an unknown
// or missing unit). Callers add the file and JSON pointer.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/time.h"

namespace fleetsim {

std::optional<Bytes> parse_bytes(std::string_view text, std::string* error);
std::optional<Bandwidth> parse_bandwidth(std::string_view text, std::string* error);
std::optional<Time> parse_time(std::string_view text, std::string* error);

// Human-readable forms used in summaries: "1 GiB", "512 KiB", "8 B"; "2.50 us"; "400.0 GB/s".
std::string format_bytes(Bytes b);
std::string format_time(Time t);
std::string format_bandwidth(Bandwidth bw);

}  // namespace fleetsim

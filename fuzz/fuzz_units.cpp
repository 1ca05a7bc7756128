// Fuzz target: the units parser (sim/core/units.cpp). The first byte picks sizes, bandwidths or
// times; the rest is the text. A parsed value must be non-negative and format without trouble.
#include <cstdint>
#include <string>

#include "core/units.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text = fleetsim::fuzz::as_text(data + 1, size - 1);
  std::string err;
  switch (data[0] % 3) {
    case 0:
      if (auto b = fleetsim::parse_bytes(text, &err)) {
        if (b->count() < 0) __builtin_trap();
        (void)fleetsim::format_bytes(*b);
      } else if (err.empty()) {
        __builtin_trap();  // a refusal must say what was expected
      }
      break;
    case 1:
      if (auto bw = fleetsim::parse_bandwidth(text, &err)) {
        if (bw->bytes_per_second() < 0) __builtin_trap();
        (void)fleetsim::format_bandwidth(*bw);
      } else if (err.empty()) {
        __builtin_trap();
      }
      break;
    default:
      if (auto t = fleetsim::parse_time(text, &err)) {
        if (t->ps() < 0) __builtin_trap();
        (void)fleetsim::format_time(*t);
      } else if (err.empty()) {
        __builtin_trap();
      }
      break;
  }
  return 0;
}

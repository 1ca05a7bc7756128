// Shared helpers of the libFuzzer targets in fuzz/ (see fuzz/README.md). Each target feeds the
// input to one parser and accepts exactly one outcome besides success: an InputError (exit 2 in
// the CLI). Anything else — a crash, a sanitizer report, an uncaught exception of another type
// (which the CLI would turn into exit 1, "internal error"), a hang — is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace fleetsim::fuzz {

// The fuzz input as text.
inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Writes bytes to /tmp/fleetsim-fuzz-<pid><suffix>, for parsers that take a path: one file per
// process and suffix, so a target may keep two files at once (an input and what it wrote).
inline std::string write_temp(const void* data, size_t size, const char* suffix) {
  const std::string path = "/tmp/fleetsim-fuzz-" + std::to_string(::getpid()) + suffix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) __builtin_trap();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) __builtin_trap();
  std::fclose(f);
  return path;
}

// Where topologies/, workloads/ and calibration/ live: the source tree (compiled in).
inline std::string data_dir() {
  return FLEETSIM_SOURCE_DIR;
}

}  // namespace fleetsim::fuzz

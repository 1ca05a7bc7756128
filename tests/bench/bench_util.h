// The wall clock and this process's peak resident memory, which the benchmarks of tests/bench
// print beside their own figures. Header only.
#pragma once

#include <sys/resource.h>

#include <chrono>

namespace fleetsim::bench {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
inline long peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

}  // namespace fleetsim::bench

// Progress of a long command on stderr (sweeps, large collectives, the run-level Monte Carlo,
// plans, validation): a bar redrawn in place on a terminal, or a plain line every few seconds
// for logs. Never on stdout and never in an output file, so it cannot change a result's bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace fleetsim {

// --progress: auto (a bar when stderr is a terminal, else the command's default), bar, lines,
// none.
enum class ProgressMode { kAuto, kBar, kLines, kNone };
// "auto", "bar", "lines", "none"; false for anything else.
bool parse_progress_mode(const std::string& s, ProgressMode* out);

struct ProgressStyle {
  std::string label;         // what the lines start with ("sweep NAME")
  std::string unit;          // what is counted ("points")
  bool show_failed = false;  // ", N failed" on lines, " (N failed)" on the bar
  // kAuto off a terminal: sweeps print lines (batch logs); run, plan and validate nothing, so
  // their stderr stays as it was.
  ProgressMode otherwise = ProgressMode::kLines;
  double line_interval_s = 10;  // period of plain lines
  // Nothing is drawn before this much time has passed (a command that ends sooner shows no
  // progress at all, not even the final state).
  double delay_s = 0;
};

class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  Progress(ProgressMode mode, std::FILE* out, ProgressStyle style);
  // `done` of `total` (`ran`: of those, done in this process, for the rate; `bad`: failed so
  // far). Redrawn at most every 0.2 s (bar) or line_interval_s (lines) unless `final`; the
  // final call ends the bar's line. Thread-safe.
  void show(int64_t done, int64_t total, int64_t ran, int64_t bad, bool final);
  // Restarts the clock (rate, ETA, delay) where the counted work begins, when the object was
  // made earlier. Thread-safe.
  void begin();
  // Whether anything will ever be drawn (mode none resolves to false).
  bool enabled() const { return mode_ != ProgressMode::kNone; }

 private:
  ProgressMode mode_;
  std::FILE* out_;
  ProgressStyle style_;
  std::mutex mu_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
  bool drawn_ = false;
};

// "12s", "3m05s", "2h10m".
std::string format_duration(double s);

}  // namespace fleetsim

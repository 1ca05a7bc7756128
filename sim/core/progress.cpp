// Progress bars and lines on stderr (progress.h); moved here from the sweep runner so every long
// command draws the same one.
#include "core/progress.h"

#include <unistd.h>

namespace fleetsim {

bool parse_progress_mode(const std::string& s, ProgressMode* out) {
  if (s == "auto") {
    *out = ProgressMode::kAuto;
  } else if (s == "bar") {
    *out = ProgressMode::kBar;
  } else if (s == "lines") {
    *out = ProgressMode::kLines;
  } else if (s == "none") {
    *out = ProgressMode::kNone;
  } else {
    return false;
  }
  return true;
}

std::string format_duration(double s) {
  char buf[32];
  if (s < 100) {
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  } else if (s < 6000) {
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600,
                  static_cast<int>(s) / 60 % 60);
  }
  return buf;
}

Progress::Progress(ProgressMode mode, std::FILE* out, ProgressStyle style)
    : mode_(mode), out_(out), style_(std::move(style)) {
  if (out_ == nullptr) mode_ = ProgressMode::kNone;
  if (mode_ == ProgressMode::kAuto)
    mode_ = ::isatty(::fileno(out_)) ? ProgressMode::kBar : style_.otherwise;
  if (mode_ == ProgressMode::kAuto) mode_ = ProgressMode::kNone;
}

void Progress::begin() {
  std::lock_guard<std::mutex> lk(mu_);
  start_ = last_ = Clock::now();
}

void Progress::show(int64_t done, int64_t total, int64_t ran, int64_t bad, bool final) {
  if (mode_ == ProgressMode::kNone) return;
  std::lock_guard<std::mutex> lk(mu_);
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (!drawn_ && elapsed < style_.delay_s) return;
  const double since = std::chrono::duration<double>(now - last_).count();
  const double period = mode_ == ProgressMode::kBar ? 0.2 : style_.line_interval_s;
  if (!final && since < period) return;
  last_ = now;
  const double rate = elapsed > 0 ? static_cast<double>(ran) / elapsed : 0;
  const std::string eta =
      rate > 0 ? format_duration(static_cast<double>(total - done) / rate) : std::string("?");
  const double frac = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const char* unit = style_.unit.c_str();
  const auto d = static_cast<long long>(done), t = static_cast<long long>(total);
  if (mode_ == ProgressMode::kBar) {
    constexpr int kWidth = 30;
    const int fill = static_cast<int>(frac * kWidth);
    std::string bar(static_cast<size_t>(fill), '=');
    if (fill < kWidth) bar += '>' + std::string(static_cast<size_t>(kWidth - fill - 1), ' ');
    const std::string failed =
        style_.show_failed && bad > 0 ? " (" + std::to_string(bad) + " failed)" : std::string();
    std::fprintf(out_, "\r%s [%s] %lld/%lld %3.0f%% %.1f %s/s ETA %s%s\033[K", style_.label.c_str(),
                 bar.c_str(), d, t, frac * 100, rate, unit, eta.c_str(), failed.c_str());
    if (final) std::fputc('\n', out_);
  } else {
    const std::string failed =
        style_.show_failed ? ", " + std::to_string(bad) + " failed" : std::string();
    std::fprintf(out_, "%s: %lld/%lld %s (%.0f%%), %.1f %s/s, ETA %s%s\n", style_.label.c_str(), d,
                 t, unit, frac * 100, rate, unit, final ? "0s" : eta.c_str(), failed.c_str());
  }
  drawn_ = true;
  std::fflush(out_);
}

}  // namespace fleetsim

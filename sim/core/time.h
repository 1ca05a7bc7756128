// Strong types for simulated time, data sizes and bandwidth.
//
// Time is an int64 count of picoseconds (about ±106 days), so event ordering is exact and
// identical on every machine. Bytes is an int64 byte count. Bandwidth is bytes per second as a
// double; the one conversion from size and bandwidth to Time (transfer_time) rounds up to the
// next picosecond so a transfer never finishes early.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace fleetsim {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time from_ps(int64_t ps) { return Time(ps); }
  static constexpr Time from_ns(double ns) {
    return Time(static_cast<int64_t>(std::llround(ns * 1e3)));
  }
  static constexpr Time from_us(double us) {
    return Time(static_cast<int64_t>(std::llround(us * 1e6)));
  }
  static constexpr Time from_seconds(double s) {
    return Time(static_cast<int64_t>(std::llround(s * 1e12)));
  }
  static constexpr Time zero() { return Time(0); }
  // A time later than every finite time; arithmetic on it saturates.
  static constexpr Time infinite() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ps() const { return ps_; }
  constexpr double ns() const { return static_cast<double>(ps_) * 1e-3; }
  constexpr double us() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr bool is_infinite() const { return ps_ == std::numeric_limits<int64_t>::max(); }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const {
    if (is_infinite() || o.is_infinite()) return infinite();
    return Time(ps_ + o.ps_);
  }
  constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr Time& operator-=(Time o) { return *this = *this - o; }
  constexpr Time operator*(int64_t k) const { return is_infinite() ? *this : Time(ps_ * k); }

 private:
  constexpr explicit Time(int64_t ps) : ps_(ps) {}
  int64_t ps_ = 0;
};

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(int64_t n) : n_(n) {}
  constexpr int64_t count() const { return n_; }
  constexpr double as_double() const { return static_cast<double>(n_); }
  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return Bytes(n_ + o.n_); }
  constexpr Bytes operator-(Bytes o) const { return Bytes(n_ - o.n_); }
  constexpr Bytes& operator+=(Bytes o) {
    n_ += o.n_;
    return *this;
  }
  constexpr Bytes operator*(int64_t k) const { return Bytes(n_ * k); }

 private:
  int64_t n_ = 0;
};

class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_second(double v) { return Bandwidth(v); }
  static constexpr Bandwidth gbytes_per_second(double v) { return Bandwidth(v * 1e9); }
  static constexpr Bandwidth gbits_per_second(double v) { return Bandwidth(v * 1e9 / 8.0); }
  constexpr double bytes_per_second() const { return bps_; }
  constexpr double gbytes_per_second() const { return bps_ * 1e-9; }
  constexpr auto operator<=>(const Bandwidth&) const = default;
  constexpr Bandwidth operator*(double k) const { return Bandwidth(bps_ * k); }
  constexpr Bandwidth operator/(double k) const { return Bandwidth(bps_ / k); }
  constexpr Bandwidth operator+(Bandwidth o) const { return Bandwidth(bps_ + o.bps_); }

 private:
  constexpr explicit Bandwidth(double v) : bps_(v) {}
  double bps_ = 0.0;
};

// Time to move `size` at `bw`, rounded up to a whole picosecond. Infinite for zero bandwidth.
inline Time transfer_time(Bytes size, Bandwidth bw) {
  if (size.count() <= 0) return Time::zero();
  if (bw.bytes_per_second() <= 0.0) return Time::infinite();
  const double ps = std::ceil(size.as_double() / bw.bytes_per_second() * 1e12);
  if (ps >= 9.2e18) return Time::infinite();
  return Time::from_ps(static_cast<int64_t>(ps));
}

}  // namespace fleetsim

#include <catch2/catch.hpp>

#include "core/units.h"

using namespace fleetsim;

TEST_CASE("sizes parse with decimal and binary prefixes") {
  std::string err;
  CHECK(parse_bytes("180GB", &err)->count() == 180'000'000'000);
  CHECK(parse_bytes("179GiB", &err)->count() == 179LL * 1024 * 1024 * 1024);
  CHECK(parse_bytes("1.5 MiB", &err)->count() == 1572864);
  CHECK(parse_bytes("4096", &err)->count() == 4096);
}

TEST_CASE("bandwidths parse as bits or bytes per second") {
  std::string err;
  CHECK(parse_bandwidth("400Gbps", &err)->bytes_per_second() == Approx(50e9));
  CHECK(parse_bandwidth("1.8TB/s", &err)->bytes_per_second() == Approx(1.8e12));
  CHECK(parse_bandwidth("900GB/s", &err)->gbytes_per_second() == Approx(900));
}

TEST_CASE("times parse to picoseconds") {
  std::string err;
  CHECK(parse_time("2.5us", &err)->ps() == 2'500'000);
  CHECK(parse_time("150ns", &err)->ps() == 150'000);
  CHECK(parse_time("30min", &err)->ps() == 1'800'000'000'000'000LL);
  CHECK(parse_time("1ps", &err)->ps() == 1);
}

TEST_CASE("bad quantities are refused with a reason") {
  std::string err;
  CHECK_FALSE(parse_bytes("-5GB", &err));
  CHECK(err.find("negative") != std::string::npos);
  CHECK_FALSE(parse_bytes("5 parsecs", &err));
  CHECK(err.find("unknown unit 'parsecs'") != std::string::npos);
  CHECK_FALSE(parse_bandwidth("400", &err));
  CHECK(err.find("no unit") != std::string::npos);
  CHECK_FALSE(parse_time("nan s", &err));
  CHECK_FALSE(parse_bytes("1e300GB", &err));
  CHECK(err.find("too large") != std::string::npos);
  CHECK_FALSE(parse_time("", &err));
}

TEST_CASE("transfer time rounds up to a whole picosecond") {
  // 1 byte at 3 B/s = 333333333333.33 ps → 333333333334 ps.
  CHECK(transfer_time(Bytes(1), Bandwidth::bytes_per_second(3)).ps() == 333'333'333'334);
  CHECK(transfer_time(Bytes(1 << 30), Bandwidth::gbytes_per_second(1)).seconds() ==
        Approx(1.073741824));
  CHECK(transfer_time(Bytes(5), Bandwidth::bytes_per_second(0)).is_infinite());
}

// The shared CSV reader (core/csv.h): line numbers after leading comment lines.
#include <catch2/catch.hpp>

#include "core/csv.h"
#include "core/error.h"

using namespace fleetsim;

TEST_CASE("parse_csv_after_comments keeps the whole file's line numbers", "[csv]") {
  // Lines: 1 and 2 comments, 3 header, 4 a row, 5-6 a row with a quoted newline, 7 a row.
  const std::string text = "# source: x\n# note\na,b\n1,2\n\"3\n3\",4\n5,6\n";
  const CsvTable t = parse_csv_after_comments(text, "t.csv");
  CHECK(t.header_line == 3);
  REQUIRE(t.rows.size() == 3);
  CHECK(t.line_of_row == std::vector<int>{4, 5, 7});
  CHECK(t.rows[1][0] == "3\n3");
  // Without comments it is parse_csv.
  const CsvTable plain = parse_csv_after_comments("a,b\n1,2\n", "t.csv");
  CHECK(plain.header_line == 1);
  CHECK(plain.line_of_row == std::vector<int>{2});
}

TEST_CASE("parse_csv_after_comments gives a parse error the file's line", "[csv]") {
  // The unterminated quote opens on the file's line 4 (2 comment lines, the header, the row).
  try {
    parse_csv_after_comments("# a\n# b\nx,y\n\"open,1\n", "t.csv");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "t.csv");
    CHECK(e.pointer() == "line 4");
  }
}

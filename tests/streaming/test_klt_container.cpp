// The KLT container's own checks (klt_container.hpp): the writer keeps blocks in order, and the reader
// refuses values a compressor never writes. Round trips and truncated or corrupt files are tested
// end to end through klt_compress and klt_decompress (tests/apps/klt_test.sh).
#include <catch2/catch.hpp>

#include <complex>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "eigstream/error.hpp"
#include "eigstream/streaming/klt_container.hpp"

namespace {

using eigstream::streaming::CoefficientFormat;
using eigstream::streaming::KltBlock;
using eigstream::streaming::KltReader;
using eigstream::streaming::KltWriter;
using cfloat = std::complex<float>;

const std::vector<cfloat> identity_2x1 = {{1, 0}, {0, 0}};  // 2 channels, k = 1

std::string temporary(const std::string& name) { return "klt_container_test_" + name + ".klt"; }

// Reads every block of `path`; the reader's error message when it throws.
std::string read_all(const std::string& path) {
  try {
    KltReader reader(path);
    KltBlock block;
    std::vector<cfloat> basis;
    bool changed = false;
    while (reader.next(block, basis, changed)) {
    }
    return "";
  } catch (const eigstream::Error& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("klt container: the writer refuses a block before the end of the last, or past sample 2^64 - 1",
          "[klt-container]") {
  const std::string path = temporary("order");
  {
    KltWriter writer(path, {2, 0, CoefficientFormat::float32});
    writer.write_basis(identity_2x1.data(), 1);
    std::vector<cfloat> c(10, cfloat{0.5f, 0});
    writer.write_block(100, 10, c);  // samples 100 .. 109
    writer.write_block(115, 10, c);  // a gap of 5 is allowed
    CHECK_THROWS_WITH(writer.write_block(120, 10, c), Catch::Contains("blocks must be in order") &&
                                                         Catch::Contains("from sample 120, when the last ended at 125"));
    const std::uint64_t last = std::numeric_limits<std::uint64_t>::max();
    CHECK_THROWS_WITH(writer.write_block(last - 5, 10, c), Catch::Contains("blocks must be in order"));
    writer.write_block(last - 10, 10, c);  // ends at 2^64 - 1 exactly
    CHECK(writer.totals().blocks == 3);
    writer.finish();
  }
  CHECK(read_all(path).empty());
  std::remove(path.c_str());
}

TEST_CASE("klt container: the writer refuses a channel count its reader refuses", "[klt-container]") {
  const std::string path = temporary("channels");
  for (const std::uint32_t channels : {0u, 65537u}) {
    CAPTURE(channels);
    CHECK_THROWS_WITH(KltWriter(path, {channels, 0, CoefficientFormat::float32}),
                      Catch::Contains(path + ": " + std::to_string(channels) + " channels, not between 1 and 65536"));
  }
  CHECK_FALSE(std::ifstream(path + ".partial"));
}

TEST_CASE("klt container: the reader refuses NaN or Inf in a basis or in float32 coefficients", "[klt-container]") {
  const float bad = GENERATE(std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity());
  const bool in_basis = GENERATE(true, false);
  const std::string path = temporary("nan");
  {
    KltWriter writer(path, {2, 0, CoefficientFormat::float32});
    std::vector<cfloat> basis = identity_2x1;
    std::vector<cfloat> c(4, cfloat{0.5f, 0});
    (in_basis ? basis[1] : c[3]) = {0, bad};
    writer.write_basis(basis.data(), 1);
    writer.write_block(0, 4, c);
    writer.finish();
  }
  const std::string message = read_all(path);
  CAPTURE(bad, in_basis, message);
  CHECK_THAT(message, Catch::Contains(std::string(in_basis ? "basis" : "block") + " record holds NaN or Inf") &&
                          Catch::Contains(path + ", byte " + (in_basis ? "32" : "64")));
  std::remove(path.c_str());
}

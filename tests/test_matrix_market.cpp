// Matrix Market reader and writer: bit-exact round trips, symmetric/hermitian expansion, and an io
// error naming the file and line for every malformed input.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "eigstream/error.hpp"
#include "eigstream/matrix_market.hpp"

namespace fs = std::filesystem;
using eigstream::Error;
using eigstream::ErrorCode;
using eigstream::index_t;
using eigstream::MatrixFile;
using eigstream::MatrixSymmetry;

namespace {

// A fresh directory under the system temp directory, removed with everything in it on scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path_ = fs::temp_directory_path() /
            ("eigstream_mm_test_" + std::to_string(stamp) + "_" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = file(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Reads `text` as a file called `name` and expects an io error whose message names the file and
// contains every one of `parts` (e.g. "line 4").
void require_io_error(const std::string& name, const std::string& text, const std::vector<std::string>& parts) {
  TempDir dir;
  const std::string path = dir.write(name, text);
  INFO("file:\n" << text);
  try {
    eigstream::read_matrix_market(path);
    FAIL("no error was thrown");
  } catch (const Error& e) {
    const std::string message = e.what();
    INFO("message: " << message);
    CHECK(e.code() == ErrorCode::io);
    CHECK(message.find(path) != std::string::npos);
    for (const std::string& part : parts) CHECK(message.find(part) != std::string::npos);
  }
}

template <class R>
bool same_bits(R x, R y) {
  return std::memcmp(&x, &y, sizeof(R)) == 0;
}

// Values that stress round-tripping: tiny, huge, subnormal, negative zero, many digits.
template <class R>
std::vector<R> awkward_values(std::size_t count) {
  std::vector<R> v = {R(0),
                      -R(0),
                      R(1) / R(3),
                      -R(2) / R(7),
                      std::numeric_limits<R>::min(),
                      std::numeric_limits<R>::denorm_min(),
                      std::numeric_limits<R>::max(),
                      -std::numeric_limits<R>::lowest() / R(3),
                      std::numeric_limits<R>::epsilon(),
                      R(1) + std::numeric_limits<R>::epsilon(),
                      R(123456789.0),
                      R(-9.87654321e-20)};
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> mant(-1, 1);
  std::uniform_int_distribution<int> expo(-30, 30);
  while (v.size() < count) v.push_back(static_cast<R>(std::ldexp(mant(rng), expo(rng))));
  v.resize(count);
  return v;
}

}  // namespace

TEMPLATE_TEST_CASE("matrix market: real round trip is bit-exact", "[matrix_market]", float, double) {
  using R = TestType;
  TempDir dir;
  const index_t rows = 5, cols = 3, ld = 7;  // a view with ld > rows: padding must not be written
  std::vector<R> storage(static_cast<std::size_t>(ld * cols), R(-777));
  const std::vector<R> values = awkward_values<R>(static_cast<std::size_t>(rows * cols));
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i) storage[i + j * ld] = values[i + j * rows];

  const std::string path = dir.file("real.mtx");
  eigstream::write_matrix_market<R>(path, eigstream::matrix<const R>(storage.data(), rows, cols, ld),
                                    "a comment\nover two lines");
  const MatrixFile f = eigstream::read_matrix_market(path);
  REQUIRE(f.rows == rows);
  REQUIRE(f.cols == cols);
  CHECK_FALSE(f.is_complex);
  CHECK(f.symmetry == MatrixSymmetry::general);
  REQUIRE(f.data.size() == values.size());
  for (std::size_t k = 0; k < values.size(); ++k) {
    INFO("entry " << k << " wrote " << values[k] << " read " << f.data[k].real());
    CHECK(same_bits(static_cast<R>(f.data[k].real()), values[k]));
    CHECK(f.data[k].imag() == 0);
  }

  // No temporary file is left beside the result.
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);
}

TEMPLATE_TEST_CASE("matrix market: complex round trip is bit-exact", "[matrix_market]", std::complex<float>,
                   std::complex<double>) {
  using T = TestType;
  using R = typename T::value_type;
  TempDir dir;
  const index_t rows = 4, cols = 6;
  const std::vector<R> re = awkward_values<R>(static_cast<std::size_t>(rows * cols));
  std::vector<R> im = awkward_values<R>(static_cast<std::size_t>(rows * cols) + 5);
  im.erase(im.begin(), im.begin() + 5);
  std::vector<T> a(re.size());
  for (std::size_t k = 0; k < a.size(); ++k) a[k] = T(re[k], -im[k]);

  const std::string path = dir.file("complex.mtx");
  eigstream::write_matrix_market<T>(path, eigstream::matrix<const T>(a.data(), rows, cols));
  const MatrixFile f = eigstream::read_matrix_market(path);
  REQUIRE(f.rows == rows);
  REQUIRE(f.cols == cols);
  CHECK(f.is_complex);
  REQUIRE(f.data.size() == a.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    INFO("entry " << k);
    CHECK(same_bits(static_cast<R>(f.data[k].real()), a[k].real()));
    CHECK(same_bits(static_cast<R>(f.data[k].imag()), a[k].imag()));
  }
}

TEST_CASE("matrix market: the writer's header and overwrite", "[matrix_market]") {
  TempDir dir;
  const std::string path = dir.file("w.mtx");
  const std::vector<double> a = {1, 2, 3, 4, 5, 6};
  eigstream::write_matrix_market<double>(path, eigstream::matrix<const double>(a.data(), 3, 2), "hello");
  std::ifstream in(path);
  std::string banner, comment, size;
  std::getline(in, banner);
  std::getline(in, comment);
  std::getline(in, size);
  CHECK(banner == "%%MatrixMarket matrix array real general");
  CHECK(comment == "% hello");
  CHECK(size == "3 2");

  // Writing again replaces the file completely.
  const std::vector<std::complex<float>> c = {{1, 2}};
  eigstream::write_matrix_market<std::complex<float>>(path, eigstream::matrix<const std::complex<float>>(c.data(), 1, 1));
  const MatrixFile f = eigstream::read_matrix_market(path);
  CHECK(f.is_complex);
  CHECK(f.rows == 1);
  CHECK(f.cols == 1);
  CHECK(f.data[0] == std::complex<double>(1, 2));
}

TEST_CASE("matrix market: writing through a symbolic link replaces its target", "[matrix_market]") {
  TempDir dir;
  const std::string target = dir.write("target.mtx", "old contents\n");
  const std::string link = dir.file("link.mtx");
  std::error_code ec;
  fs::create_symlink(target, link, ec);
  if (ec) return;  // no symbolic links on this file system
  const std::vector<double> a = {0.25, -1.5};
  eigstream::write_matrix_market<double>(link, eigstream::matrix<const double>(a.data(), 2, 1));
  CHECK(fs::is_symlink(link));
  const MatrixFile f = eigstream::read_matrix_market(target);
  REQUIRE(f.data.size() == 2);
  CHECK(f.data[0].real() == 0.25);
  CHECK(f.data[1].real() == -1.5);
}

TEST_CASE("matrix market: a failed write names the path and leaves no file", "[matrix_market]") {
  TempDir dir;
  const std::string path = dir.file("no_such_dir/out.mtx");
  const std::vector<double> a = {1};
  try {
    eigstream::write_matrix_market<double>(path, eigstream::matrix<const double>(a.data(), 1, 1));
    FAIL("no error was thrown");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::io);
    CHECK(std::string(e.what()).find(path) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("matrix market: write_files writes every file or none", "[matrix_market]") {
  TempDir dir;
  const std::string kept = dir.write("kept.txt", "old contents\n");
  const std::string created = dir.file("created.mtx");
  const std::string failing = dir.file("no_such_dir/out.mtx");
  const std::vector<double> a = {0.25, -1.5};
  const auto column = eigstream::matrix<const double>(a.data(), 2, 1);
  try {
    eigstream::write_files({eigstream::values_file(kept, a.data(), 2), eigstream::matrix_market_file(created, column),
                            eigstream::matrix_market_file(failing, column)});
    FAIL("no error was thrown");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::io);
    CHECK(std::string(e.what()).find(failing) != std::string::npos);
  }
  std::ifstream in(kept);
  std::string line;
  std::getline(in, line);
  CHECK(line == "old contents");
  CHECK_FALSE(fs::exists(created));
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);  // no temporary left

  eigstream::write_files({eigstream::values_file(kept, a.data(), 2), eigstream::matrix_market_file(created, column)});
  CHECK(eigstream::read_matrix_market(created).data.size() == 2);
  std::ifstream values(kept);
  std::getline(values, line);
  CHECK(line == "0.25");
}

TEST_CASE("matrix market: a bad matrix view is an invalid_argument error naming the file", "[matrix_market]") {
  TempDir dir;
  const std::string path = dir.file("view.mtx");
  const std::vector<double> a(6);
  const auto short_ld = eigstream::MatrixView<const double>{a.data(), 3, 2, 2};  // ld 2 < 3 rows
  try {
    eigstream::write_matrix_market(path, short_ld);
    FAIL("no error was thrown");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    CHECK(std::string(e.what()) == path + ": cannot write a bad matrix view (3 x 2, ld 2)");
  }
  CHECK_FALSE(fs::exists(path));
}

TEMPLATE_TEST_CASE("values files: one value per line, bit-exact back through strtod", "[matrix_market]", float,
                   double) {
  using R = TestType;
  TempDir dir;
  const std::vector<R> values = {R(1) / R(3), -std::numeric_limits<R>::max(), std::numeric_limits<R>::denorm_min(),
                                 R(0), R(-0.0), R(6.02214076e23)};
  const std::string path = dir.file("w.txt");
  eigstream::write_values(path, values.data(), eigstream::index_t(values.size()));
  std::ifstream in(path);
  std::vector<R> back;
  for (std::string line; std::getline(in, line);) back.push_back(R(std::strtod(line.c_str(), nullptr)));
  REQUIRE(back.size() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    CHECK(back[i] == values[i]);
    CHECK(std::signbit(back[i]) == std::signbit(values[i]));
  }
  const std::string bad = dir.file("no_such_dir/w.txt");
  try {
    eigstream::write_values(bad, values.data(), eigstream::index_t(values.size()));
    FAIL("no error was thrown");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::io);
    CHECK(std::string(e.what()).find(bad) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(bad));
}

TEST_CASE("matrix market: symmetric storage is expanded", "[matrix_market]") {
  TempDir dir;
  // Lower triangle of [[1 2 3] [2 4 5] [3 5 6]], column by column, with comments and blank lines.
  const std::string path = dir.write("sym.mtx",
                                     "%%MatrixMarket MATRIX Array Real SYMMETRIC\r\n"
                                     "% a comment\n"
                                     "%\n"
                                     "\n"
                                     "3 3\n"
                                     "1\n2\n3\n4\n5\n\n6\n");
  const MatrixFile f = eigstream::read_matrix_market(path);
  CHECK(f.symmetry == MatrixSymmetry::symmetric);
  CHECK_FALSE(f.is_complex);
  REQUIRE(f.rows == 3);
  REQUIRE(f.cols == 3);
  const double full[9] = {1, 2, 3, 2, 4, 5, 3, 5, 6};
  for (int k = 0; k < 9; ++k) CHECK(f.data[k] == std::complex<double>(full[k], 0));
}

TEST_CASE("matrix market: integer field and numeric token forms", "[matrix_market]") {
  TempDir dir;
  const std::string path = dir.write("int.mtx",
                                     "%%MatrixMarket matrix array integer general\n"
                                     "2 3\n"
                                     "1\n-2\n  +3  \n1e2\n0x10\nnan\n");
  const MatrixFile f = eigstream::read_matrix_market(path);
  REQUIRE(f.data.size() == 6);
  CHECK(f.data[0].real() == 1);
  CHECK(f.data[1].real() == -2);
  CHECK(f.data[2].real() == 3);
  CHECK(f.data[3].real() == 100);
  CHECK(f.data[4].real() == 16);
  CHECK(std::isnan(f.data[5].real()));  // NaN is read; rejecting it is the solvers' job
}

TEST_CASE("matrix market: hermitian storage is expanded with conjugates", "[matrix_market]") {
  TempDir dir;
  // Lower triangle of [[2, 1-1i, 3i] [1+1i, 5, 4-2i] [-3i, 4+2i, 7]].
  const std::string path = dir.write("herm.mtx",
                                     "%%MatrixMarket matrix array complex hermitian\n"
                                     "3 3\n"
                                     "2 0\n"
                                     "1 1\n"
                                     "0 -3\n"
                                     "5 -0\n"
                                     "4 2\n"
                                     "7 0\n");
  const MatrixFile f = eigstream::read_matrix_market(path);
  CHECK(f.symmetry == MatrixSymmetry::hermitian);
  CHECK(f.is_complex);
  using C = std::complex<double>;
  const C full[9] = {C(2, 0), C(1, 1), C(0, -3), C(1, -1), C(5, 0), C(4, 2), C(0, 3), C(4, -2), C(7, 0)};
  for (int k = 0; k < 9; ++k) {
    INFO("entry " << k);
    CHECK(f.data[k] == full[k]);
  }
}

TEST_CASE("matrix market: complex symmetric storage is expanded without conjugates", "[matrix_market]") {
  TempDir dir;
  const std::string path = dir.write("csym.mtx",
                                     "%%MatrixMarket matrix array complex symmetric\n"
                                     "2 2\n"
                                     "1 1\n"
                                     "2 3\n"
                                     "4 5\n");
  const MatrixFile f = eigstream::read_matrix_market(path);
  using C = std::complex<double>;
  CHECK(f.data[0] == C(1, 1));
  CHECK(f.data[1] == C(2, 3));
  CHECK(f.data[2] == C(2, 3));
  CHECK(f.data[3] == C(4, 5));
}

TEST_CASE("matrix market: a missing file is an io error naming it", "[matrix_market]") {
  TempDir dir;
  const std::string path = dir.file("does_not_exist.mtx");
  try {
    eigstream::read_matrix_market(path);
    FAIL("no error was thrown");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::io);
    CHECK(std::string(e.what()).find(path) != std::string::npos);
  }
}

TEST_CASE("matrix market: malformed files are io errors naming the file and line", "[matrix_market]") {
  SECTION("empty file") { require_io_error("empty.mtx", "", {"line 1"}); }
  SECTION("no banner") { require_io_error("nobanner.mtx", "2 2\n1\n2\n3\n4\n", {"line 1", "%%MatrixMarket"}); }
  SECTION("short banner") { require_io_error("short.mtx", "%%MatrixMarket matrix array real\n1 1\n1\n", {"line 1"}); }
  SECTION("coordinate format") {
    require_io_error("coo.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 5\n",
                     {"line 1", "coordinate", "array"});
  }
  SECTION("pattern field") {
    require_io_error("pat.mtx", "%%MatrixMarket matrix array pattern general\n1 1\n1\n", {"line 1", "pattern"});
  }
  SECTION("skew-symmetric") {
    require_io_error("skew.mtx", "%%MatrixMarket matrix array real skew-symmetric\n2 2\n1\n",
                     {"line 1", "skew-symmetric", "supported"});
  }
  SECTION("unknown field") {
    require_io_error("field.mtx", "%%MatrixMarket matrix array quaternion general\n1 1\n1\n", {"line 1", "quaternion"});
  }
  SECTION("bad size line") {
    require_io_error("size.mtx", "%%MatrixMarket matrix array real general\n% c\n2 x\n1\n2\n", {"line 3", "size"});
  }
  SECTION("size line with three numbers") {
    require_io_error("size3.mtx", "%%MatrixMarket matrix array real general\n2 2 4\n1\n2\n3\n4\n", {"line 2"});
  }
  SECTION("negative size") {
    require_io_error("neg.mtx", "%%MatrixMarket matrix array real general\n-2 2\n", {"line 2"});
  }
  SECTION("missing size line") {
    require_io_error("nosize.mtx", "%%MatrixMarket matrix array real general\n% only a comment\n",
                     {"line 3", "size"});
  }
  SECTION("non-square symmetric") {
    require_io_error("rect.mtx", "%%MatrixMarket matrix array real symmetric\n2 3\n1\n2\n3\n4\n5\n",
                     {"line 2", "square"});
  }
  SECTION("non-numeric token") {
    require_io_error("token.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\nabc\n4\n",
                     {"line 5", "'abc'", "not a number"});
  }
  SECTION("trailing garbage in a number") {
    require_io_error("garbage.mtx", "%%MatrixMarket matrix array real general\n1 2\n1.5\n2.0x\n",
                     {"line 4", "'2.0x'"});
  }
  SECTION("non-numeric imaginary part") {
    require_io_error("imag.mtx", "%%MatrixMarket matrix array complex general\n1 2\n1 2\n3 i\n", {"line 4", "'i'"});
  }
  SECTION("complex entry with one number") {
    require_io_error("half.mtx", "%%MatrixMarket matrix array complex general\n1 2\n1 2\n3\n", {"line 4", "re im"});
  }
  SECTION("two real entries on a line") {
    require_io_error("two.mtx", "%%MatrixMarket matrix array real general\n2 1\n1 2\n", {"line 3"});
  }
  SECTION("truncated file") {
    require_io_error("trunc.mtx", "%%MatrixMarket matrix array real general\n3 3\n1\n2\n3\n4\n5\n",
                     {"line 7", "expected 9 entries", "found 5"});
  }
  SECTION("truncated symmetric file") {
    require_io_error("trunc_sym.mtx", "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n",
                     {"line 6", "expected 6 entries", "found 4"});
  }
  SECTION("too many entries") {
    require_io_error("many.mtx", "%%MatrixMarket matrix array real general\n2 1\n1\n2\n3\n",
                     {"line 5", "too many entries", "expected 2"});
  }
  SECTION("hermitian diagonal with an imaginary part") {
    require_io_error("hdiag.mtx", "%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 1\n3 0.5\n",
                     {"line 5", "diagonal", "(2,2)"});
  }
}

// eigstream: the command-line program. `eigstream evd` and `eigstream svd` read a Matrix Market
// array file, solve it with the library (float/double, real/complex as the file and --precision say),
// write the values and vectors asked for, and print one compact JSON line of results on stdout.
// Exit codes: 0 success, 1 internal error, 2 bad usage or bad input, 3 not converged.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "eigstream/eigstream.hpp"

namespace {

using eigstream::Error;
using eigstream::ErrorCode;
using eigstream::index_t;
using eigstream::MatrixFile;
using eigstream::MatrixView;
using eigstream::real_t;

enum class Command { evd, svd };

struct Args {
  Command command = Command::evd;
  std::string in;
  std::string warm_start;
  std::string values, vectors;  // evd outputs
  std::string s, u, v;          // svd outputs
  std::string precision = "double";
  std::string backend = "auto";
  std::string method = "two-sided";
  std::string ordering = "round-robin";
  std::string sort = "descending";
  double tol = 0;
  int max_sweeps = 30;
};

constexpr int kExitOk = 0, kExitInternal = 1, kExitBadInput = 2, kExitNotConverged = 3;

// ---------------------------------------------------------------------------------------------
// Help texts

const char* kProgramHelp =
    "eigstream: eigendecomposition (evd) and singular value decomposition (svd) of dense matrices\n"
    "stored in Matrix Market files, by Jacobi rotations.";

const char* kFormatsHelp =
    "Input files: Matrix Market array (dense) format\n"
    "  %%MatrixMarket matrix array real|integer|complex general|symmetric|hermitian\n"
    "  % any number of comment lines\n"
    "  rows cols\n"
    "  then one entry per line, column by column ('re im' per line for complex);\n"
    "  symmetric and hermitian files hold the lower triangle only (diagonal included).\n"
    "  Coordinate (sparse), pattern and skew-symmetric files are not supported.\n"
    "Output files: values one per line with full round-trip precision; matrices as\n"
    "  '%%MatrixMarket matrix array real|complex general' files. They are written all or\n"
    "  nothing: when one cannot be written, no output file is created or replaced (a pipe or\n"
    "  device given as an output is written directly). An output that names an input or\n"
    "  another output is refused.\n"
    "Real files are solved in real arithmetic, complex files in complex arithmetic, in the\n"
    "precision that --precision names (double by default).\n";

const char* kExitHelp =
    "Exit codes:\n"
    "  0  success\n"
    "  1  internal error\n"
    "  2  bad usage or bad input: unknown option, unreadable or malformed file, NaN/Inf entry,\n"
    "     non-Hermitian or non-square input to evd, bad warm start, no CUDA backend\n"
    "     (the message on stderr starts with 'eigstream: ')\n"
    "  3  not converged within --max-sweeps: the outputs and the JSON line are still written\n";

std::string program_footer() {
  return std::string("\n") + kFormatsHelp +
         "\nOn success each command prints one JSON line on stdout; see 'eigstream evd --help'\n"
         "and 'eigstream svd --help' for its keys.\n\n" +
         kExitHelp +
         "\nExamples:\n"
         "  eigstream evd --in A.mtx --values w.txt --vectors V.mtx\n"
         "  eigstream svd --in X.mtx --s s.txt --u U.mtx --v V.mtx --precision float\n";
}

std::string evd_footer() {
  return std::string(
             "\nComputes A = V diag(w) V^H for a real symmetric or complex Hermitian n x n matrix A.\n"
             "Eigenvalues are real; eigenvectors are the columns of V, in the order of the values.\n"
             "A matrix stored 'general' must be Hermitian to rounding, or it is rejected.\n"
             "--method one-sided works on positive semi-definite (covariance-like) matrices only.\n\n") +
         kFormatsHelp +
         "\nJSON line on stdout (compact, one line):\n"
         "  command        \"evd\"\n"
         "  backend        \"cpu\" or \"cuda\": where the solve ran\n"
         "  precision      \"float\" or \"double\"\n"
         "  complex        true when the input file is complex\n"
         "  n              order of A\n"
         "  sweeps         Jacobi sweeps that applied rotations\n"
         "  converged      true when the tolerance was met within --max-sweeps\n"
         "  off_norm       final convergence measure: off(A)/||A||_F (two-sided),\n"
         "                 max |gamma|/sqrt(alpha*beta) over column pairs (one-sided)\n"
         "  residual       ||A V - V diag(w)||_F / ||A||_F\n"
         "  orthogonality  ||V^H V - I||_F\n"
         "  seconds        wall time of the solve alone (not reading or writing files)\n\n" +
         kExitHelp +
         "\nExample:\n"
         "  eigstream evd --in A.mtx --values w.txt --vectors V.mtx\n"
         "  {\"command\":\"evd\",\"backend\":\"cpu\",\"precision\":\"double\",\"complex\":false,\"n\":64,\n"
         "   \"sweeps\":8,\"converged\":true,\"off_norm\":1.1e-17,\"residual\":3.2e-16,...}\n";
}

std::string svd_footer() {
  return std::string(
             "\nComputes the thin SVD A = U diag(s) V^H of an m x n matrix A, k = min(m, n):\n"
             "U is m x k, s has k values, V is n x k, by one-sided (Hestenes) Jacobi.\n\n") +
         kFormatsHelp +
         "\nJSON line on stdout (compact, one line):\n"
         "  command        \"svd\"\n"
         "  backend        \"cpu\" or \"cuda\": where the solve ran\n"
         "  precision      \"float\" or \"double\"\n"
         "  complex        true when the input file is complex\n"
         "  m, n           rows and columns of A\n"
         "  sweeps         Jacobi sweeps that applied rotations\n"
         "  converged      true when the tolerance was met within --max-sweeps\n"
         "  off_norm       final max |gamma|/sqrt(alpha*beta) over column pairs\n"
         "  residual       ||A V - U diag(s)||_F / ||A||_F\n"
         "  orthogonality  max(||U^H U - I||_F, ||V^H V - I||_F)\n"
         "  seconds        wall time of the solve alone (not reading or writing files)\n\n" +
         kExitHelp +
         "\nExample:\n"
         "  eigstream svd --in X.mtx --s s.txt --u U.mtx --v V.mtx\n";
}

// Options shared by evd and svd.
void add_common_options(CLI::App* cmd, Args& args) {
  cmd->add_option("--in", args.in, "Input matrix A, a Matrix Market array file")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--precision", args.precision,
                  "Arithmetic: float (std::complex<float> for complex files) or double")
      ->check(CLI::IsMember({"float", "double"}))
      ->capture_default_str();
  cmd->add_option("--backend", args.backend,
                  "Where to solve: cpu, cuda (an error when eigstream has no CUDA backend), or auto "
                  "(the GPU when it can do the work, else the CPU)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  cmd->add_option("--tol", args.tol,
                  "Convergence tolerance; 0 picks the default for the precision and method (epsilon "
                  "for two-sided, sqrt(rows)*epsilon for one-sided)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-sweeps", args.max_sweeps, "Most Jacobi sweeps before giving up (exit code 3)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--ordering", args.ordering,
                  "Order of the rotations in a sweep: round-robin (parallel chess-tournament pairs) or "
                  "cyclic (row by row)")
      ->check(CLI::IsMember({"round-robin", "cyclic"}))
      ->capture_default_str();
  cmd->add_option("--sort", args.sort, "Order of the values (vectors permuted alike)")
      ->check(CLI::IsMember({"descending", "ascending", "none"}))
      ->capture_default_str();
}

// ---------------------------------------------------------------------------------------------
// Conversions and outputs

eigstream::Options solver_options(const Args& args) {
  eigstream::Options o;
  o.tol = args.tol;
  o.max_sweeps = args.max_sweeps;
  o.ordering = args.ordering == "cyclic" ? eigstream::Ordering::cyclic : eigstream::Ordering::round_robin;
  o.sort = args.sort == "ascending" ? eigstream::Sort::ascending
           : args.sort == "none"    ? eigstream::Sort::none
                                    : eigstream::Sort::descending;
  eigstream::parse_backend(args.backend, o.backend);  // checked by --backend's IsMember
  o.method = args.method == "one-sided" ? eigstream::Method::one_sided : eigstream::Method::two_sided;
  return o;
}

std::string shape(index_t rows, index_t cols) { return std::to_string(rows) + " x " + std::to_string(cols); }

// Error(invalid_argument) when an output names the file of an input or of another output: its write
// would replace the input, or the other output. Checked before anything is read or solved.
void refuse_shared_paths(const Args& args) {
  namespace fs = std::filesystem;
  using Named = std::pair<const char*, const std::string*>;
  const std::vector<Named> inputs = {{"--in", &args.in}, {"--warm-start", &args.warm_start}};
  const std::vector<Named> outputs = args.command == Command::evd
                                         ? std::vector<Named>{{"--values", &args.values}, {"--vectors", &args.vectors}}
                                         : std::vector<Named>{{"--s", &args.s}, {"--u", &args.u}, {"--v", &args.v}};
  const auto file_of = [](const std::string& path) {
    std::error_code error;
    const fs::path file = fs::weakly_canonical(path, error);
    return error ? fs::path(path).lexically_normal() : file;
  };
  std::vector<Named> named = inputs;
  for (const Named& output : outputs) {
    if (output.second->empty()) continue;
    for (const Named& earlier : named)
      if (!earlier.second->empty() && file_of(*earlier.second) == file_of(*output.second))
        throw Error(ErrorCode::invalid_argument, std::string(output.first) + " " + *output.second + " is the file " +
                                                     earlier.first + " names: writing it would replace that");
    named.push_back(output);
  }
}

void require_nonempty(const Args& args, const MatrixFile& file) {
  if (file.rows == 0 || file.cols == 0)
    throw Error(ErrorCode::invalid_input, args.in + ": the matrix is empty (" + shape(file.rows, file.cols) + ")");
}

// The file's entries in T (real T takes the real parts of a real file).
template <class T>
std::vector<T> to_scalars(const MatrixFile& file) {
  std::vector<T> out(file.data.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::complex<double> x = file.data[k];
    if constexpr (eigstream::is_complex_v<T>) {
      out[k] = T(static_cast<real_t<T>>(x.real()), static_cast<real_t<T>>(x.imag()));
    } else {
      out[k] = static_cast<T>(x.real());
    }
  }
  return out;
}

// A k x k warm start read from `path` (empty when no path is given).
template <class T>
std::vector<T> load_warm_start(const std::string& path, index_t k, const std::string& what) {
  if (path.empty()) return {};
  const MatrixFile file = eigstream::read_matrix_market(path);
  if (file.is_complex && !eigstream::is_complex_v<T>)
    throw Error(ErrorCode::invalid_input, path + ": the warm start is complex but the input matrix is real");
  if (file.rows != k || file.cols != k)
    throw Error(ErrorCode::invalid_input,
                path + ": the warm start is " + shape(file.rows, file.cols) + ", expected " + shape(k, k) + " (" +
                    what + ")");
  return to_scalars<T>(file);
}

template <class T>
MatrixView<const T> const_view(const std::vector<T>& data, index_t rows, index_t cols) {
  if (data.empty()) return {};
  return eigstream::matrix(data.data(), rows, cols);
}

// `backend`: the one the library ran (eigstream::evd_backend / svd_backend).
template <class T>
nlohmann::ordered_json result_head(const Args& args, eigstream::Backend backend) {
  nlohmann::ordered_json j;
  j["command"] = args.command == Command::evd ? "evd" : "svd";
  j["backend"] = backend == eigstream::Backend::cuda ? "cuda" : "cpu";
  j["precision"] = std::is_same_v<real_t<T>, float> ? "float" : "double";
  j["complex"] = eigstream::is_complex_v<T>;
  return j;
}

// Adds seconds, prints the JSON line and turns the convergence status into the exit code.
int finish(const Args& args, nlohmann::ordered_json j, const eigstream::SolveInfo& info, double seconds) {
  j["seconds"] = seconds;
  std::cout << j.dump() << std::endl;
  if (info.converged) return kExitOk;
  std::cerr << "eigstream: " << (args.command == Command::evd ? "evd" : "svd") << " of " << args.in
            << " did not converge within " << args.max_sweeps << " sweep" << (args.max_sweeps == 1 ? "" : "s")
            << " (off_norm " << info.off_norm << "); the outputs were written anyway\n";
  return kExitNotConverged;
}

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// The solves

template <class T>
int run_evd(const Args& args, const MatrixFile& file) {
  using R = real_t<T>;
  if (file.rows != file.cols)
    throw Error(ErrorCode::invalid_input,
                args.in + ": evd needs a square matrix, this one is " + shape(file.rows, file.cols));
  require_nonempty(args, file);
  const index_t n = file.rows;
  const std::vector<T> a = to_scalars<T>(file);
  const std::vector<T> v0 = load_warm_start<T>(args.warm_start, n, "V0, n x n");
  std::vector<R> w(static_cast<std::size_t>(n));
  std::vector<T> v(static_cast<std::size_t>(n * n));

  const auto start = Clock::now();
  const eigstream::SolveInfo info = eigstream::evd(eigstream::matrix(a.data(), n, n), w.data(),
                                                   eigstream::matrix(v.data(), n, n), solver_options(args),
                                                   const_view(v0, n, n));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  std::vector<eigstream::OutputFile> outputs;
  if (!args.values.empty()) outputs.push_back(eigstream::values_file(args.values, w.data(), index_t(w.size())));
  if (!args.vectors.empty())
    outputs.push_back(eigstream::matrix_market_file<T>(
        args.vectors, const_view(v, n, n), "eigstream evd: eigenvectors of " + args.in + ", one per column"));
  eigstream::write_files(outputs);

  nlohmann::ordered_json j = result_head<T>(args, eigstream::evd_backend(n, 1, solver_options(args)));
  j["n"] = n;
  j["sweeps"] = info.sweeps;
  j["converged"] = info.converged;
  j["off_norm"] = info.off_norm;
  j["residual"] = eigstream::evd_residual<T>(const_view(a, n, n), w.data(), const_view(v, n, n));
  j["orthogonality"] = eigstream::orthogonality<T>(const_view(v, n, n));
  return finish(args, std::move(j), info, seconds);
}

template <class T>
int run_svd(const Args& args, const MatrixFile& file) {
  using R = real_t<T>;
  require_nonempty(args, file);
  const index_t m = file.rows, n = file.cols, k = std::min(m, n);
  const std::vector<T> a = to_scalars<T>(file);
  const std::vector<T> w0 =
      load_warm_start<T>(args.warm_start, k, m >= n ? "V0, n x n, when m >= n" : "U0, m x m, when m < n");
  std::vector<R> s(static_cast<std::size_t>(k));
  std::vector<T> u(static_cast<std::size_t>(m * k)), v(static_cast<std::size_t>(n * k));

  const auto start = Clock::now();
  const eigstream::SolveInfo info =
      eigstream::svd(eigstream::matrix(a.data(), m, n), s.data(), eigstream::matrix(u.data(), m, k),
                     eigstream::matrix(v.data(), n, k), solver_options(args), const_view(w0, k, k));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  std::vector<eigstream::OutputFile> outputs;
  if (!args.s.empty()) outputs.push_back(eigstream::values_file(args.s, s.data(), index_t(s.size())));
  if (!args.u.empty())
    outputs.push_back(eigstream::matrix_market_file<T>(
        args.u, const_view(u, m, k), "eigstream svd: left singular vectors of " + args.in + ", one per column"));
  if (!args.v.empty())
    outputs.push_back(eigstream::matrix_market_file<T>(
        args.v, const_view(v, n, k), "eigstream svd: right singular vectors of " + args.in + ", one per column"));
  eigstream::write_files(outputs);

  nlohmann::ordered_json j = result_head<T>(args, eigstream::svd_backend(m, n, 1, solver_options(args)));
  j["m"] = m;
  j["n"] = n;
  j["sweeps"] = info.sweeps;
  j["converged"] = info.converged;
  j["off_norm"] = info.off_norm;
  j["residual"] = eigstream::svd_residual<T>(const_view(a, m, n), s.data(), const_view(u, m, k), const_view(v, n, k));
  j["orthogonality"] =
      std::max(eigstream::orthogonality<T>(const_view(u, m, k)), eigstream::orthogonality<T>(const_view(v, n, k)));
  return finish(args, std::move(j), info, seconds);
}

// Calls f(T{}) with T the scalar type for the file's field and the requested precision.
template <class F>
int dispatch(bool is_complex, bool single, F&& f) {
  if (is_complex) return single ? f(std::complex<float>{}) : f(std::complex<double>{});
  return single ? f(float{}) : f(double{});
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app{kProgramHelp, "eigstream"};
  app.footer(program_footer());
  app.require_subcommand(1);
  app.set_version_flag("--version", "eigstream 0.1.0");
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("eigstream: ") + e.what() + "\nRun 'eigstream --help' or 'eigstream <command> --help' for usage.\n";
  });

  CLI::App* evd = app.add_subcommand("evd", "Eigenvalues and eigenvectors of a real symmetric or complex Hermitian matrix");
  evd->footer(evd_footer());
  add_common_options(evd, args);
  evd->add_option("--values", args.values, "Write the n eigenvalues here, one per line")->type_name("FILE");
  evd->add_option("--vectors", args.vectors, "Write the n x n eigenvectors V here (Matrix Market, one per column)")
      ->type_name("FILE");
  evd->add_option("--warm-start", args.warm_start,
                  "Start from this orthonormal n x n V0 (e.g. the --vectors of a nearby matrix): far fewer "
                  "sweeps when A moved little")
      ->type_name("FILE");
  evd->add_option("--method", args.method,
                  "two-sided Jacobi (any Hermitian matrix) or one-sided Hestenes Jacobi (positive "
                  "semi-definite matrices only)")
      ->check(CLI::IsMember({"two-sided", "one-sided"}))
      ->capture_default_str();

  CLI::App* svd = app.add_subcommand("svd", "Thin singular value decomposition A = U diag(s) V^H of an m x n matrix");
  svd->footer(svd_footer());
  add_common_options(svd, args);
  svd->add_option("--s", args.s, "Write the k = min(m, n) singular values here, one per line")->type_name("FILE");
  svd->add_option("--u", args.u, "Write the m x k left singular vectors U here (Matrix Market)")->type_name("FILE");
  svd->add_option("--v", args.v, "Write the n x k right singular vectors V here (Matrix Market)")->type_name("FILE");
  svd->add_option("--warm-start", args.warm_start,
                  "Start from this orthonormal k x k basis of the smaller side: V0 (n x n) when m >= n, "
                  "U0 (m x m) when m < n")
      ->type_name("FILE");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
  args.command = svd->parsed() ? Command::svd : Command::evd;

  try {
    refuse_shared_paths(args);
    const MatrixFile file = eigstream::read_matrix_market(args.in);
    return dispatch(file.is_complex, args.precision == "float", [&](auto zero) {
      using T = decltype(zero);
      return args.command == Command::evd ? run_evd<T>(args, file) : run_svd<T>(args, file);
    });
  } catch (const Error& e) {
    std::cerr << "eigstream: " << e.what() << '\n';
    return e.code() == ErrorCode::not_converged ? kExitNotConverged : kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "eigstream: internal error: " << e.what() << '\n';
    return kExitInternal;
  }
}

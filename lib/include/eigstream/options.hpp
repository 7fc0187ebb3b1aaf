// Options of the solvers and the status they report per matrix.
#pragma once

#include <string>

namespace eigstream {

enum class Backend { cpu, cuda, automatic };  // automatic: the GPU when it can do the work, else the CPU
// "cpu", "cuda", "auto": the spelling of the programs' --backend flags, and back (false: not a backend).
const char* to_string(Backend backend) noexcept;
bool parse_backend(const std::string& name, Backend& backend) noexcept;
enum class Ordering { round_robin, cyclic };  // parallel chess-tournament pairs, or cyclic by row
enum class Sort { descending, ascending, none };
enum class Method {
  two_sided,  // EVD by two-sided Jacobi rotations (any Hermitian matrix)
  one_sided,  // EVD by one-sided (Hestenes) Jacobi; input must be positive semi-definite
};

struct Options {
  // Convergence tolerance; 0 picks the default for the precision and method:
  //   two-sided: stop when off(A) <= tol * ||A||_F, default tol = epsilon of the precision;
  //   one-sided: stop when every pair has |gamma| / sqrt(alpha * beta) <= tol,
  //              default tol = sqrt(rows) * epsilon (as LAPACK's xGESVJ).
  double tol = 0;
  int max_sweeps = 30;
  Ordering ordering = Ordering::round_robin;
  Sort sort = Sort::descending;
  Backend backend = Backend::automatic;
  Method method = Method::two_sided;  // EVD only: SVD is always one-sided
  // Input is rejected as non-Hermitian when ||A - A^H||_F > symmetry_tol * ||A||_F;
  // 0 picks 100 * epsilon of the precision. Only the lower triangle is used after the check.
  double symmetry_tol = 0;
  // Batches: false (default) throws on the first invalid matrix; true marks it in its SolveInfo,
  // fills its outputs with NaN and solves the others.
  bool flag_invalid = false;
  bool throw_on_not_converged = false;
  // GPU kernels, with a warm start: true ends each solve with one Newton-Schulz step on the result,
  // V (3I - V^H V) / 2 (W for the SVD's warm-started side), so that it can be the next warm start
  // without a chain of warm starts drifting from orthonormality. false leaves V = V0 J with unit
  // columns, further from orthonormal than V0: ||V^H V - I||_F went from 0.2 n eps after the step
  // to 0.4-0.7 n eps one link later and 0.9-1.5 n eps six links later, in float and complex float at
  // n = 16-64 (H200, bench/results/2026-11-27-h200-warm-drift-by-link.md), and a float chain at
  // n = 32 to 1.7e-4 over 10000 links with no step. It saves the step's two n^3 products: a stream
  // can take the step on one link in a few. The CPU solvers, and the GPU kernels called with host memory
  // (eigstream::evd and evd_batched with Backend::cuda), orthonormalise the warm start on the CPU as
  // they read it: there this only saves the kernel's step.
  bool reorthonormalise = true;
};

struct SolveInfo {
  int sweeps = 0;         // sweeps that applied rotations (a last pass that only confirmed
                          // convergence is not counted)
  double off_norm = 0;    // final convergence measure, relative: off(A)/||A||_F for two-sided,
                          // max |gamma|/sqrt(alpha*beta) over pairs for one-sided
  bool converged = false;
  bool invalid_input = false;  // set only with Options::flag_invalid
};

}  // namespace eigstream

// A user of the installed package: eigenvalues of [[2, 1], [1, 2]] are 3 and 1.
#include <eigstream/eigstream.hpp>

#include <cmath>
#include <cstdio>

int main() {
  const double a[4] = {2, 1, 1, 2};
  double w[2];
  const eigstream::SolveInfo info = eigstream::evd(eigstream::matrix(a, 2, 2), w);
  const bool ok = info.converged && std::abs(w[0] - 3) < 1e-14 && std::abs(w[1] - 1) < 1e-14;
  std::printf("eigenvalues %.17g %.17g: %s\n", w[0], w[1], ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}

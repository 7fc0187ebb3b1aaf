// Runs gnuplot for the apps' --plot (see gnuplot.hpp).
#include "gnuplot.hpp"

#include <cstdio>
#include <cstdlib>

namespace eigstream::apps {

std::string run_gnuplot(const std::string& script) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    return "gnuplot is not installed (apt-get install gnuplot-nox); no picture was written";
  std::FILE* pipe = popen("gnuplot 2>&1", "w");
  if (!pipe) return "could not start gnuplot; no picture was written";
  std::fwrite(script.data(), 1, script.size(), pipe);
  const int status = pclose(pipe);
  return status == 0 ? "" : "gnuplot failed (exit status " + std::to_string(status) + "); no picture was written";
}

std::string gnuplot_quoted(const std::string& path) {
  std::string out = "\"";
  for (char c : path) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace eigstream::apps

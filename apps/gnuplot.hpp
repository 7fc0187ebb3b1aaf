// --plot for the apps: pictures drawn by gnuplot, when it is installed (Debian: gnuplot-nox).
#pragma once

#include <string>

namespace eigstream::apps {

// Runs gnuplot on `script` (which writes the picture itself: "set terminal pngcairo; set output ...").
// Returns an empty string on success, else why no picture was written (gnuplot missing or failing);
// not having a picture is never an error of the app.
std::string run_gnuplot(const std::string& script);

// `path` with characters gnuplot's double-quoted strings treat specially escaped.
std::string gnuplot_quoted(const std::string& path);

}  // namespace eigstream::apps

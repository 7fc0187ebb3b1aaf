// What every stream app does around its work: parse the command line, run, and turn an error into
// one message on stderr, "PROGRAM: ...", and an exit code; and end with the JSON summary.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace eigstream::apps {

inline constexpr int exit_ok = 0;
inline constexpr int exit_internal = 1;   // a bug, or the GPU failing (Error(cuda))
inline constexpr int exit_bad_input = 2;  // bad usage or bad input (any other eigstream::Error)

// Checks of a number > 0 and >= 0 for the apps' options, in place of CLI11's PositiveNumber and
// NonNegativeNumber, whose messages print the largest double in full.
CLI::Validator positive();
CLI::Validator non_negative();

// Parses argv into `app` (its name prefixes every message), then runs `body` and returns its exit code,
// or the code of the error it throws. Every number given to an option of floating type must be
// finite (CLI11's range checks let NaN through).
int run_app(CLI::App& app, int argc, char** argv, const std::function<int()>& body);

// Records the --plot outcome in the summary (the path, or "none: why") and says why on stderr.
void record_plot(nlohmann::json& summary, const std::string& program, const std::string& path,
                 const std::string& why_not);

// Prints the summary as one line on stdout and, when json_path is set, writes it indented there
// (Error(io) when it cannot).
void write_summary(const nlohmann::json& summary, const std::string& json_path);

}  // namespace eigstream::apps

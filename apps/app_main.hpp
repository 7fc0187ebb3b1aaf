// What every stream app does around its work: parse the command line, run, and turn an error into
// one message on stderr, "PROGRAM: ...", and an exit code; and end with the JSON summary.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <csignal>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace eigstream::streaming {
class Pipeline;
}

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

// While it lives, SIGINT and SIGTERM do not kill the process: the first calls `stop` once, with the
// signal, on a thread of its own, after saying "PROGRAM: interrupted: RESPONSE" on stderr (a stream app
// asks its pipeline to end: the output is finished, not lost), and a second ends the process at once,
// with exit code 128 + the signal. Construct it before any thread that should not take the signals
// starts (threads inherit the blocked signals).
class StopOnSignal {
 public:
  StopOnSignal(std::string program, std::string response, std::function<void(int signal)> stop);
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  bool stopped() const noexcept { return stopped_.load(std::memory_order_acquire); }

 private:
  std::string program_, response_;
  std::function<void(int)> stop_;
  sigset_t signals_, previous_;
  std::atomic<bool> stopped_{false}, done_{false};
  std::thread watcher_;
};

// Starts `pipeline` and waits for it to finish, a first SIGINT or SIGTERM ending its sources early
// (StopOnSignal). Returns whether a signal did.
bool run_pipeline(streaming::Pipeline& pipeline, const std::string& program);

// Records in the summary what the pipeline's stages counted, each when not 0: malformed_STAGE (inputs
// skipped as malformed), and the source's lost_samples (sequence gaps), resyncs (sequence
// numberings followed anew, no loss counted), late_datagrams (UDP datagrams that came late or twice,
// skipped) and broken_connections (TCP connections reset by the peer rather than closed).
void record_stage_counts(nlohmann::json& summary, const streaming::Pipeline& pipeline);
// The keys record_stage_counts may add, for the apps' --help.
inline const std::string kStageCountsHelp =
    "lost_samples, late_datagrams and resyncs (UDP), broken_connections (TCP), malformed_STAGE";

// Records the --plot outcome in the summary (the path, or "none: why") and says why on stderr.
void record_plot(nlohmann::json& summary, const std::string& program, const std::string& path,
                 const std::string& why_not);

// Prints the summary as one line on stdout and, when json_path is set, writes it indented there
// (Error(io) when it cannot).
void write_summary(const nlohmann::json& summary, const std::string& json_path);

}  // namespace eigstream::apps

// The stream apps' command-line and error handling, and their summaries (app_main.hpp).
#include "app_main.hpp"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <utility>

#include "eigstream/error.hpp"
#include "eigstream/streaming/pipeline.hpp"

namespace eigstream::apps {
namespace {

// Every number that an option of floating type (CLI11's type name "FLOAT") was given is finite:
// CLI11's range checks let NaN through, as every comparison with it is false.
void check_finite(const CLI::App& app) {
  for (const CLI::Option* option : app.get_options())
    if (option->get_type_name().rfind("FLOAT", 0) == 0)  // "FLOAT", or "FLOAT:" and a check's text
      for (const std::string& value : option->results())
        if (!std::isfinite(std::strtod(value.c_str(), nullptr)))
          throw CLI::ValidationError(option->get_name() + ": " + value + " is not a finite number");
  for (const CLI::App* sub : app.get_subcommands()) check_finite(*sub);
}

// A check that `value` reads as a number for which `holds` is true; else "Value V is not WHAT".
CLI::Validator number_check(bool (*holds)(double), const std::string& what, const std::string& name) {
  return CLI::Validator(
      [holds, what](std::string& value) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(value.c_str(), &end);
        if (end == value.c_str() || *end != '\0' || !holds(x)) return "Value " + value + " is not " + what;
        return "";
      },
      "", name);
}

}  // namespace

CLI::Validator positive() {
  return number_check([](double x) { return x > 0; }, "a number > 0", "POSITIVE");
}

CLI::Validator non_negative() {
  return number_check([](double x) { return x >= 0; }, "a number >= 0", "NONNEGATIVE");
}

int run_app(CLI::App& app, int argc, char** argv, const std::function<int()>& body) {
  const std::string name = app.get_name();
  app.failure_message([name](const CLI::App*, const CLI::Error& e) {
    return name + ": " + e.what() + "\nRun '" + name + " --help' for usage.\n";
  });
  try {
    app.parse(argc, argv);
    check_finite(app);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? exit_ok : exit_bad_input;
  }
  try {
    return body();
  } catch (const Error& e) {
    std::cerr << name << ": " << e.what() << '\n';
    return e.code() == ErrorCode::cuda ? exit_internal : exit_bad_input;
  } catch (const std::exception& e) {
    std::cerr << name << ": internal error: " << e.what() << '\n';
    return exit_internal;
  }
}

StopOnSignal::StopOnSignal(std::string program, std::string response, std::function<void(int signal)> stop)
    : program_(std::move(program)), response_(std::move(response)), stop_(std::move(stop)) {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
  watcher_ = std::thread([this] {
    const timespec poll_interval{0, 100'000'000};  // how soon the destructor's request is seen
    while (!done_.load(std::memory_order_acquire)) {
      const int signal = sigtimedwait(&signals_, nullptr, &poll_interval);
      if (signal < 0) continue;  // the interval passed (EAGAIN), or EINTR
      if (stopped()) std::_Exit(128 + signal);
      std::cerr << program_ << ": " << (signal == SIGINT ? "interrupted" : "terminated") << ": " << response_
                << std::endl;
      stopped_.store(true, std::memory_order_release);
      stop_(signal);
    }
  });
}

StopOnSignal::~StopOnSignal() {
  done_.store(true, std::memory_order_release);
  watcher_.join();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

bool run_pipeline(streaming::Pipeline& pipeline, const std::string& program) {
  const StopOnSignal on_signal(program, "finishing the output (again to quit at once)",
                               [&pipeline](int) { pipeline.request_stop(); });
  pipeline.start();
  pipeline.wait();
  return on_signal.stopped();
}

void record_stage_counts(nlohmann::json& summary, const streaming::Pipeline& pipeline) {
  for (const auto& st : pipeline.stats()) {
    if (st.malformed > 0) summary["malformed_" + st.name] = st.malformed;
    if (st.lost_samples > 0) summary["lost_samples"] = st.lost_samples;
    if (st.resyncs > 0) summary["resyncs"] = st.resyncs;
    if (st.late > 0) summary["late_datagrams"] = st.late;
    if (st.broken_connections > 0) summary["broken_connections"] = st.broken_connections;
  }
}

void record_plot(nlohmann::json& summary, const std::string& program, const std::string& path,
                 const std::string& why_not) {
  summary["plot"] = why_not.empty() ? path : "none: " + why_not;
  if (!why_not.empty()) std::cerr << program << ": --plot: " << why_not << '\n';
}

void write_summary(const nlohmann::json& summary, const std::string& json_path) {
  std::cout << summary.dump() << std::endl;
  if (json_path.empty()) return;
  std::ofstream out(json_path);
  out << summary.dump(2) << '\n';
  if (!out) throw Error(ErrorCode::io, "--json " + json_path + ": cannot write");
}

}  // namespace eigstream::apps

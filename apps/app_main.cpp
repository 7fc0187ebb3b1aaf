// The stream apps' command-line and error handling, and their summaries (app_main.hpp).
#include "app_main.hpp"

#include <fstream>
#include <iostream>

#include "eigstream/error.hpp"

namespace eigstream::apps {

int run_app(CLI::App& app, int argc, char** argv, const std::function<int()>& body) {
  const std::string name = app.get_name();
  app.failure_message([name](const CLI::App*, const CLI::Error& e) {
    return name + ": " + e.what() + "\nRun '" + name + " --help' for usage.\n";
  });
  try {
    app.parse(argc, argv);
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

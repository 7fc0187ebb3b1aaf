// What the benchmarks record of the machine they ran on: the CPU model and how busy it was.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

inline std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

// How busy the machine was when the run began (other work slows every case): the 1-minute load
// average and the threads runnable at that moment, from /proc/loadavg.
inline nlohmann::json machine_load() {
  double load = 0;
  std::string skip, running;
  std::ifstream("/proc/loadavg") >> load >> skip >> skip >> running;
  return {{"load_average_1min", load}, {"runnable_threads", std::atoi(running.c_str())}};
}

// Sample files the apps write under temporary names and rename into place only when complete: a raw
// file NAME (written as NAME.partial) or a SigMF recording BASE (BASE.partial.sigmf-data and -meta,
// renamed data first, metadata last). An output abandoned before commit() leaves nothing behind.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "eigstream/streaming/sample_format.hpp"
#include "eigstream/streaming/sample_io.hpp"
#include "eigstream/streaming/sigmf.hpp"
#include "app_main.hpp"

namespace eigstream::apps {

class PendingSampleFile {
 public:
  // With `remove_on_signal` (the program's name, for an output of no use unfinished: siggen's,
  // klt_decompress's), from before the temporary files exist until the object is gone, a SIGINT or
  // SIGTERM removes them, unless commit() has renamed them, and ends the process at once with exit
  // code 128 + the signal. Empty: signals are left alone.
  static std::unique_ptr<PendingSampleFile> raw(const std::string& path, streaming::SampleFormat format,
                                                std::size_t channels, const std::string& remove_on_signal = "");
  static std::unique_ptr<PendingSampleFile> sigmf(const std::string& base, const streaming::SigmfMetadata& metadata,
                                                  const std::string& remove_on_signal = "");
  ~PendingSampleFile();  // without commit(): closes and removes the temporary files
  PendingSampleFile(const PendingSampleFile&) = delete;
  PendingSampleFile& operator=(const PendingSampleFile&) = delete;

  streaming::SampleWriter& writer() { return *writer_; }
  const std::string& data_path() const { return data_path_; }  // the final name of the samples
  // Flushes and closes the writer, then renames the files into place (Error(io) when it cannot).
  void commit();

 private:
  PendingSampleFile(std::vector<std::pair<std::string, std::string>> renames, std::string data_path,
                    const std::string& remove_on_signal);
  void remove_temporaries() const;

  std::vector<std::pair<std::string, std::string>> renames_;  // temporary, final; in commit order
  std::string data_path_;
  std::unique_ptr<streaming::SampleWriter> writer_;
  bool committed_ = false;
  std::mutex mutex_;  // creating the files, commit() and a signal's removal, one at a time
  std::unique_ptr<StopOnSignal> on_signal_;
};

}  // namespace eigstream::apps

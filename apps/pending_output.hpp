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
  static std::unique_ptr<PendingSampleFile> raw(const std::string& path, streaming::SampleFormat format,
                                                std::size_t channels);
  static std::unique_ptr<PendingSampleFile> sigmf(const std::string& base, const streaming::SigmfMetadata& metadata);
  ~PendingSampleFile();  // without commit(): closes and removes the temporary files
  PendingSampleFile(const PendingSampleFile&) = delete;
  PendingSampleFile& operator=(const PendingSampleFile&) = delete;

  streaming::SampleWriter& writer() { return *writer_; }
  const std::string& data_path() const { return data_path_; }  // the final name of the samples
  // Flushes and closes the writer, then renames the files into place (Error(io) when it cannot).
  void commit();
  // Removes the temporary files, unless commit() has renamed them; safe while another thread writes
  // or commits (that thread's writes then go to a removed file).
  void abandon();

 private:
  PendingSampleFile() = default;

  std::unique_ptr<streaming::SampleWriter> writer_;
  std::vector<std::pair<std::string, std::string>> renames_;  // temporary, final; in commit order
  std::string data_path_;
  bool committed_ = false;
  std::mutex commit_mutex_;  // commit() and abandon() one at a time
};

// While it lives, a SIGINT or SIGTERM removes `file`'s temporary files and ends the process at once,
// with exit code 128 + the signal: for an output of no use unfinished (siggen's, klt_decompress's).
class RemoveOnSignal {
 public:
  RemoveOnSignal(const std::string& program, PendingSampleFile& file);

 private:
  StopOnSignal watcher_;
};

}  // namespace eigstream::apps

// Sample files the apps write under temporary names and rename into place only when complete: a raw
// file NAME (written as NAME.partial) or a SigMF recording BASE (BASE.partial.sigmf-data and -meta,
// renamed data first, metadata last). An output abandoned before commit() leaves nothing behind.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "eigstream/streaming/sample_format.hpp"
#include "eigstream/streaming/sample_io.hpp"
#include "eigstream/streaming/sigmf.hpp"

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

 private:
  PendingSampleFile() = default;

  std::unique_ptr<streaming::SampleWriter> writer_;
  std::vector<std::pair<std::string, std::string>> renames_;  // temporary, final; in commit order
  std::string data_path_;
  bool committed_ = false;
};

}  // namespace eigstream::apps

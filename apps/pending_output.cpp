// Sample files written under temporary names and renamed into place when complete (pending_output.hpp).
#include "pending_output.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "eigstream/error.hpp"
#include "eigstream/streaming/file_io.hpp"

namespace eigstream::apps {

PendingSampleFile::PendingSampleFile(std::vector<std::pair<std::string, std::string>> renames,
                                     std::string data_path, const std::string& remove_on_signal)
    : renames_(std::move(renames)), data_path_(std::move(data_path)) {
  if (remove_on_signal.empty()) return;
  on_signal_ = std::make_unique<StopOnSignal>(remove_on_signal, "removing the output unless it is complete",
                                              [this](int signal) {
                                                const std::lock_guard<std::mutex> lock(mutex_);
                                                if (committed_) return;  // complete: the run ends as usual
                                                remove_temporaries();
                                                std::_Exit(128 + signal);
                                              });
}

std::unique_ptr<PendingSampleFile> PendingSampleFile::raw(const std::string& path, streaming::SampleFormat format,
                                                          std::size_t channels, const std::string& remove_on_signal) {
  std::unique_ptr<PendingSampleFile> f(new PendingSampleFile({{path + ".partial", path}}, path, remove_on_signal));
  const std::lock_guard<std::mutex> lock(f->mutex_);
  f->writer_ = std::make_unique<streaming::FileSampleWriter>(f->renames_[0].first, format, channels);
  return f;
}

std::unique_ptr<PendingSampleFile> PendingSampleFile::sigmf(const std::string& base,
                                                            const streaming::SigmfMetadata& metadata,
                                                            const std::string& remove_on_signal) {
  const streaming::SigmfPaths paths = streaming::sigmf_paths(base);
  const std::string stem = paths.meta.substr(0, paths.meta.size() - std::strlen(".sigmf-meta"));
  const streaming::SigmfPaths temporary = streaming::sigmf_paths(stem + ".partial");
  std::unique_ptr<PendingSampleFile> f(new PendingSampleFile(
      {{temporary.data, paths.data}, {temporary.meta, paths.meta}}, paths.data, remove_on_signal));
  const std::lock_guard<std::mutex> lock(f->mutex_);
  f->writer_ = std::make_unique<streaming::SigmfWriter>(temporary.meta, metadata);
  return f;
}

PendingSampleFile::~PendingSampleFile() {
  on_signal_.reset();  // no signal removes anything from here on
  writer_.reset();
  if (!committed_) remove_temporaries();
}

void PendingSampleFile::commit() {
  const std::lock_guard<std::mutex> lock(mutex_);
  writer_->flush();
  writer_.reset();
  for (const auto& [temporary, final_path] : renames_)
    if (std::rename(temporary.c_str(), final_path.c_str()) != 0)
      throw Error(ErrorCode::io, final_path + ": cannot rename " + temporary + " into place: " + std::strerror(errno));
  committed_ = true;
}

void PendingSampleFile::remove_temporaries() const {
  for (const auto& r : renames_) std::remove(r.first.c_str());
}

}  // namespace eigstream::apps

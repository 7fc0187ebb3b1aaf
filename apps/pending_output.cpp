// Sample files written under temporary names and renamed into place when complete (pending_output.hpp).
#include "pending_output.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "eigstream/error.hpp"
#include "eigstream/streaming/file_io.hpp"

namespace eigstream::apps {

std::unique_ptr<PendingSampleFile> PendingSampleFile::raw(const std::string& path, streaming::SampleFormat format,
                                                          std::size_t channels) {
  std::unique_ptr<PendingSampleFile> f(new PendingSampleFile());
  f->renames_ = {{path + ".partial", path}};
  f->data_path_ = path;
  f->writer_ = std::make_unique<streaming::FileSampleWriter>(f->renames_[0].first, format, channels);
  return f;
}

std::unique_ptr<PendingSampleFile> PendingSampleFile::sigmf(const std::string& base,
                                                            const streaming::SigmfMetadata& metadata) {
  const streaming::SigmfPaths paths = streaming::sigmf_paths(base);
  const std::string stem = paths.meta.substr(0, paths.meta.size() - std::strlen(".sigmf-meta"));
  const streaming::SigmfPaths temporary = streaming::sigmf_paths(stem + ".partial");
  std::unique_ptr<PendingSampleFile> f(new PendingSampleFile());
  f->renames_ = {{temporary.data, paths.data}, {temporary.meta, paths.meta}};
  f->data_path_ = paths.data;
  f->writer_ = std::make_unique<streaming::SigmfWriter>(temporary.meta, metadata);
  return f;
}

PendingSampleFile::~PendingSampleFile() {
  writer_.reset();
  if (!committed_)
    for (const auto& r : renames_) std::remove(r.first.c_str());
}

void PendingSampleFile::commit() {
  const std::lock_guard<std::mutex> lock(commit_mutex_);
  writer_->flush();
  writer_.reset();
  for (const auto& [temporary, final_path] : renames_)
    if (std::rename(temporary.c_str(), final_path.c_str()) != 0)
      throw Error(ErrorCode::io, final_path + ": cannot rename " + temporary + " into place: " + std::strerror(errno));
  committed_ = true;
}

void PendingSampleFile::abandon() {
  const std::lock_guard<std::mutex> lock(commit_mutex_);
  if (!committed_)
    for (const auto& r : renames_) std::remove(r.first.c_str());
}

RemoveOnSignal::RemoveOnSignal(const std::string& program, PendingSampleFile& file)
    : watcher_(program, "removing the unfinished output", [&file](int signal) {
        file.abandon();
        std::_Exit(128 + signal);
      }) {}

}  // namespace eigstream::apps

// WriterSink: blocks to a SampleWriter.
#include "eigstream/streaming/sinks.hpp"

#include "eigstream/error.hpp"

#include <string>

namespace eigstream::streaming {

WriterSink::WriterSink(std::string name, std::unique_ptr<SampleWriter> writer)
    : Sink<Block>(std::move(name)), writer_(std::move(writer)) {
  if (!writer_) throw Error(ErrorCode::invalid_argument, "streaming: sink '" + this->name() + "' has no writer");
}

void WriterSink::process(Handle<Block> block) {
  if (block->channels() != writer_->channels())
    throw Error(ErrorCode::invalid_argument, "streaming: sink '" + name() + "': block " +
                                                 std::to_string(block->stamp.sequence) + " has " +
                                                 std::to_string(block->channels()) + " channels, the writer takes " +
                                                 std::to_string(writer_->channels()));
  writer_->write(block->data(), block->samples);
}

void WriterSink::flush() { writer_->flush(); }

}  // namespace eigstream::streaming

// The streaming runtime in one include: pools, edges, stages, the pipeline, the reader source, the
// sinks, the in-memory reader, and the processing stages (covariance, decomposition, KLT,
// beamforming).
#pragma once

#include "eigstream/streaming/beamform_stage.hpp"
#include "eigstream/streaming/block.hpp"
#include "eigstream/streaming/covariance_stage.hpp"
#include "eigstream/streaming/decompose_stage.hpp"
#include "eigstream/streaming/edge.hpp"
#include "eigstream/streaming/klt_stage.hpp"
#include "eigstream/streaming/memory_reader.hpp"
#include "eigstream/streaming/pipeline.hpp"
#include "eigstream/streaming/pool.hpp"
#include "eigstream/streaming/reader_source.hpp"
#include "eigstream/streaming/sample_io.hpp"
#include "eigstream/streaming/sinks.hpp"
#include "eigstream/streaming/stage.hpp"
#include "eigstream/streaming/stats.hpp"

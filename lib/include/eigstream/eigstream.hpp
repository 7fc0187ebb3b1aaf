// The whole public API of eigstream (no CUDA types: see eigstream/cuda.hpp for stream-taking calls).
#pragma once

#include "eigstream/accuracy.hpp"
#include "eigstream/beamforming.hpp"
#include "eigstream/covariance.hpp"
#include "eigstream/error.hpp"
#include "eigstream/evd.hpp"
#include "eigstream/klt.hpp"
#include "eigstream/matrix_market.hpp"
#include "eigstream/options.hpp"
#include "eigstream/simulation.hpp"
#include "eigstream/svd.hpp"
#include "eigstream/views.hpp"

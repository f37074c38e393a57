#pragma once
// Draws from a work::Distribution with an engine random stream (one draw per call; the words
// each kind consumes are those of the RandomStream call it makes).
#include "sim/engine/random.hpp"
#include "workloads/distribution.hpp"

namespace cs::serving {

double draw(const work::Distribution& d, engine::RandomStream& rng);

}  // namespace cs::serving

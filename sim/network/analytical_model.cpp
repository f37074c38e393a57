#include "sim/network/analytical_model.hpp"

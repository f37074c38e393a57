#include "workloads/collective_plan.hpp"

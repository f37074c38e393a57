#pragma once
// A TPU slice as a fabric: the chips of one generation on the ICI torus of the slice's shape,
// one chip per node at its own torus position, the chip's ICI links the torus's cables. Used by
// topology.kind "tpu_slice" and by an LLM replica's tensor-parallel collectives on a TPU host.
//
// Units: bytes/s, seconds. Invariants: the shape's sides are >= 1; a TPU has ici_links = 2 x its
// torus's dimensions (v4, v5p: 6 ports, 3D; v5e, v6e: 4 ports, 2D).
#include <vector>

#include "sim/compute/gpu_catalog.hpp"
#include "topology/params.hpp"

namespace cs::compute {

// Per ICI hop, one way: 0.5 us ("How to Scale Your Model", part 2, worked problem 5: TPU v5e).
inline constexpr double kIciHopLatency_s = 0.5e-6;

// Makes `p` the torus of `shape` with `spec`'s chips: kind torus, one chip and one NIC per node,
// each link at the chip's per-link ICI rate and kIciHopLatency_s, the chip into its links (the
// node's NIC and PCIe cables) at their sum. p's other fields are left as they are.
void set_tpu_slice_topology(const GpuSpec& spec, const std::vector<int>& shape, topo::TopologyParams& p);

// The ICI grid `chips` chips of one TPU host form: the most nearly square a x b with a <= b
// (a the largest divisor of chips at most its square root), with a leading 1 on a 3D
// generation. A v5e or v6e host's 8 chips are 2x4, a v5e-4's 2x2 (Google Cloud's "TPU v5e" and
// "TPU v6e" pages: the 8-chip VM's topology 2x4, the 4-chip one's 2x2); a v4 or v5p host's 4,
// 1x2x2. chips >= 1.
std::vector<int> tpu_host_shape(const GpuSpec& spec, int chips);

}  // namespace cs::compute

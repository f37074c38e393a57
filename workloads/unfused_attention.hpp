#pragma once
// Attention computed unfused: the score matrix of every (sequence, head) written to device
// memory by one GEMM (Q K^T), read and rewritten by the softmax, read by the next GEMM
// (probabilities x V), instead of living in on-chip memory as flash attention keeps it. Two
// frameworks run it so: Megatron-LM before FlashAttention (training, `flash_attention` false:
// training_ops.cpp) and AWS's transformers-neuronx up to Neuron SDK 2.18 in its
// context-encoding (prefill) graph (serving, `flash_attention` false on a replica:
// sim/serving/llm_timing.hpp). The byte counts below serve both.
//
// Per element of one head's score matrix (queries x keys; the causal mask is applied to the
// whole matrix, not skipped, so the matrix is the rectangle of every query by every key up to
// the last one):
//   FLOPs          flops_per_score(head_dim) = 2 x head_dim (Q K^T) + 2 x head_dim (P V)
//   GEMM traffic   the scores written by Q K^T and the probabilities read by P V: 2 x kScoreBytes
//   softmax        one memory-bound pass reading the scores and writing the probabilities
//                  (the scale and the mask fused into it, as Megatron's fused scale-mask-softmax
//                  and one XLA fusion do): kSoftmaxBytes forward, kSoftmaxBackwardBytes backward
//                  (reads the probabilities and their gradient, writes the scores' gradient)
//   dropout        training only: kDropoutBytes forward and backward (reads a 16-bit tensor,
//                  writes one, and its 1-byte mask read or written)
// Units: bytes per score element; FLOPs per score element.
namespace cs::work::unfused_attention {

inline constexpr double kScoreBytes = 2;  // a score or probability, 16-bit
inline constexpr double kSoftmaxBytes = 2 * kScoreBytes;
inline constexpr double kSoftmaxBackwardBytes = 3 * kScoreBytes;
inline constexpr double kDropoutBytes = 2 * kScoreBytes + 1;
inline constexpr double kGemmTrafficBytes = 2 * kScoreBytes;

constexpr double flops_per_score(double head_dim) { return 4 * head_dim; }

}  // namespace cs::work::unfused_attention

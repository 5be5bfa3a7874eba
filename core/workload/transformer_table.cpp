// BERT (encoder) and GPT-2 (decoder) stacks as Hugging Face's BertModel and GPT2Model build
// them: per-layer flops and gradient bytes from a config. Rows: the embeddings, then per
// block the attention's Q, K, V projections, its scores and weighted sum, its output
// projection (with the block's first LayerNorm), the MLP's first linear and its second (with
// the other LayerNorm), then BERT's pooler or GPT-2's ln_f with the tied LM head. A row is
// what backward finishes at once: one linear, so that DDP's buckets can close between them
// as they would between parameter tensors. Notation: h = hidden, f = ffn width, V = vocab, T =
// tokens per sequence (one sample); a linear from in to out costs 2*in*out flops per token. Not
// counted: LayerNorm, softmax, GELU, dropout and the residual adds (elementwise, a few flops per
// activation against the 2*h or 2*f per activation of the matmuls).
#include <string>

#include <fmt/format.h>

#include "core/workload/model_builders.h"

namespace dsgd {
namespace {

struct TransformerConfig {
  std::string name, source, sample;
  bool decoder = false;  // GPT-2: pre-LN blocks, ln_f and an LM head tied to wte
  int64_t layers = 0, hidden = 0, heads = 0, ffn = 0;
  int64_t vocab = 0, positions = 0, type_vocab = 0;  // type_vocab: BERT's token types
  int64_t tokens = 0;                                // T, the sequence length of a sample
};

int64_t linear_params(int64_t in, int64_t out) {
  return in * out + out;
}  // with bias
int64_t layer_norm_params(int64_t h) {
  return 2 * h;
}  // gain and bias

// A layer whose matmuls all have weights: their backward costs the forward twice more, once
// for the input's gradient and once for the weights'.
WorkloadLayer weighted_layer(const std::string& name, double forward_flops, int64_t params) {
  WorkloadLayer layer;
  layer.name = name;
  layer.forward_flops = forward_flops;
  layer.input_grad_flops = forward_flops;
  layer.weight_grad_flops = forward_flops;
  layer.grad_bytes = kBytesPerGrad * params;
  layer.update_flops = kSgdFlopsPerParam * static_cast<double>(params);
  return layer;
}

// Word, position (and BERT's token type) tables, plus BERT's embedding LayerNorm. A lookup and
// its gradient (a scatter-add of T rows) cost no matmul flops; counted as 0.
WorkloadLayer embeddings(const TransformerConfig& c) {
  int64_t params = (c.vocab + c.positions + c.type_vocab) * c.hidden;
  if (!c.decoder) params += layer_norm_params(c.hidden);
  return weighted_layer("embeddings", 0, params);
}

// A linear in -> out on every token, with `extra` parameters beside it (a LayerNorm's).
WorkloadLayer linear(const TransformerConfig& c, const std::string& name, int64_t in, int64_t out,
                     int64_t extra = 0) {
  const double flops =
      static_cast<double>(c.tokens) * 2 * static_cast<double>(in) * static_cast<double>(out);
  return weighted_layer(name, flops, linear_params(in, out) + extra);
}

// The scores Q K^T and the weighted sum of V (2*T*h flops per token each, over the whole
// sequence: the causal mask of GPT-2 masks the scores, it does not skip them). No weights:
// their backward (2x their forward, one matmul per operand) is all input gradient.
WorkloadLayer attention_core(const TransformerConfig& c, const std::string& name) {
  const double T = static_cast<double>(c.tokens), h = static_cast<double>(c.hidden);
  WorkloadLayer layer;
  layer.name = name;
  layer.forward_flops = T * 2 * 2 * T * h;
  layer.input_grad_flops = 2 * layer.forward_flops;
  return layer;
}

// One block: attention (Q, K, V as one h -> 3h linear, as GPT-2's c_attn; BERT's three
// h -> h linears have the same flops and parameters), then the MLP h -> f -> h.
void add_block(const TransformerConfig& c, int64_t i, std::vector<WorkloadLayer>& layers) {
  const std::string attn =
      c.decoder ? fmt::format("h.{}.attn", i) : fmt::format("encoder.layer.{}.attention", i);
  const std::string mlp =
      c.decoder ? fmt::format("h.{}.mlp", i) : fmt::format("encoder.layer.{}.mlp", i);
  const int64_t h = c.hidden, norm = layer_norm_params(c.hidden);
  layers.push_back(linear(c, attn + ".qkv", h, 3 * h));
  layers.push_back(attention_core(c, attn + ".core"));
  layers.push_back(linear(c, attn + ".out", h, h, norm));
  layers.push_back(linear(c, mlp + ".fc", h, c.ffn));
  layers.push_back(linear(c, mlp + ".proj", c.ffn, h, norm));
}

// BERT's pooler: a linear h -> h (and tanh) on the first token only, once per sample.
// GPT-2's ln_f, and the LM head h -> V on every token, whose weights are wte: their gradient
// is added to the embeddings' and all-reduced with them, so no grad bytes here.
WorkloadLayer head(const TransformerConfig& c) {
  const double h = static_cast<double>(c.hidden);
  if (!c.decoder) return weighted_layer("pooler", 2 * h * h, linear_params(c.hidden, c.hidden));
  WorkloadLayer layer = weighted_layer("ln_f+lm_head", 0, layer_norm_params(c.hidden));
  const double lm_head = static_cast<double>(c.tokens) * 2 * h * static_cast<double>(c.vocab);
  layer.forward_flops = lm_head;
  layer.input_grad_flops = lm_head;
  layer.weight_grad_flops = lm_head;
  return layer;
}

Workload transformer_workload(const TransformerConfig& c) {
  Workload w;
  w.name = c.name;
  w.source = c.source;
  w.sample = c.sample;
  w.layers.push_back(embeddings(c));
  for (int64_t i = 0; i < c.layers; ++i)
    add_block(c, i, w.layers);
  w.layers.push_back(head(c));
  return w;
}

// GPT-2 sizes from Hugging Face's configs: vocab 50257, 1024 positions, f = 4h.
TransformerConfig gpt2_config(const std::string& name, const std::string& params_text,
                              int64_t layers, int64_t hidden, int64_t heads) {
  TransformerConfig c;
  c.name = name;
  c.source = fmt::format(
      "Radford et al. 2019, Hugging Face GPT2Model {} ({} parameters; LM head tied to wte), "
      "sequences of 1024 tokens; flops = 2 x matmul multiply-adds, elementwise ops not counted",
      name, params_text);
  c.sample = "sequences of 1024 tokens";
  c.decoder = true;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.ffn = 4 * hidden;
  c.vocab = 50257;
  c.positions = 1024;
  c.tokens = 1024;
  return c;
}

}  // namespace

// bert-large-uncased: 24 layers, h = 1024, 16 heads, f = 4096, vocab 30522, 512 positions,
// 2 token types; BertModel with its pooler.
Workload bert_large_workload() {
  TransformerConfig c;
  c.name = "bert-large";
  c.source =
      "Devlin et al. 2019, Hugging Face BertModel bert-large-uncased with pooler (335,141,888 "
      "parameters), sequences of 512 tokens; flops = 2 x matmul multiply-adds, elementwise ops "
      "not counted";
  c.sample = "sequences of 512 tokens";
  c.layers = 24;
  c.hidden = 1024;
  c.heads = 16;
  c.ffn = 4096;
  c.vocab = 30522;
  c.positions = 512;
  c.type_vocab = 2;
  c.tokens = 512;
  return transformer_workload(c);
}

Workload gpt2_workload() {
  return transformer_workload(gpt2_config("gpt2", "124,439,808", 12, 768, 12));
}

Workload gpt2_xl_workload() {
  return transformer_workload(gpt2_config("gpt2-xl", "1,557,611,200", 48, 1600, 25));
}

}  // namespace dsgd

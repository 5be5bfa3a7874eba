// The built-in workload tables: parameter totals equal to the reference implementations'
// (torchvision resnet50, Hugging Face BertModel and GPT2Model), ResNet-50's multiply-adds
// against torchvision's published 4.09 GFLOPS (which are MACs), per-layer numbers computed by
// hand from each architecture, and the error for a name that is not a model.
#include <catch2/catch.hpp>

#include <string>

#include "core/errors.h"
#include "core/workload/model_tables.h"

using namespace dsgd;
using Catch::Contains;

namespace {

double total_forward_flops(const Workload& w) {
  double flops = 0;
  for (const WorkloadLayer& layer : w.layers)
    flops += layer.forward_flops;
  return flops;
}

const WorkloadLayer& layer_named(const Workload& w, const std::string& name) {
  for (const WorkloadLayer& layer : w.layers)
    if (layer.name == name) return layer;
  FAIL("no layer " << name << " in " << w.name);
  return w.layers.front();
}

}  // namespace

TEST_CASE("built-in names, in order", "[workload]") {
  CHECK(builtin_workload_names() ==
        std::vector<std::string>{"resnet50", "bert-large", "gpt2", "gpt2-xl"});
}

TEST_CASE("parameter totals equal the reference implementations'", "[workload]") {
  CHECK(builtin_workload("resnet50").params() == 25'557'032);     // torchvision resnet50
  CHECK(builtin_workload("bert-large").params() == 335'141'888);  // BertModel, with pooler
  CHECK(builtin_workload("gpt2").params() == 124'439'808);        // GPT2Model gpt2
  CHECK(builtin_workload("gpt2-xl").params() == 1'557'611'200);   // GPT2Model gpt2-xl
  for (const std::string& name : builtin_workload_names())
    CHECK(builtin_workload(name).grad_bytes() == 4 * builtin_workload(name).params());
}

TEST_CASE("resnet50: 53 convs and fc, 4.09e9 multiply-adds per 224x224 image", "[workload]") {
  const Workload w = builtin_workload("resnet50");
  REQUIRE(w.layers.size() == 54);
  CHECK(w.layers.front().name == "conv1");
  CHECK(w.layers.back().name == "fc");
  CHECK(w.sample == "224x224 images");
  // Conv and fc MACs exactly; torchvision publishes them rounded as 4.09 "GFLOPS".
  const double macs = total_forward_flops(w) / 2;
  CHECK(macs == 4'089'184'256.0);
  CHECK(macs == Approx(4.09e9).epsilon(0.01));

  // conv1: 7x7, 3 -> 64 channels, 112x112 out; BatchNorm adds 2 x 64 parameters. It reads
  // the images, so it computes no input gradient.
  const WorkloadLayer& conv1 = w.layers.front();
  CHECK(conv1.forward_flops == 2.0 * 64 * 112 * 112 * 3 * 7 * 7);
  CHECK(conv1.weight_grad_flops == conv1.forward_flops);
  CHECK(conv1.input_grad_flops == 0);
  CHECK(conv1.grad_bytes == 4 * (64 * 3 * 7 * 7 + 2 * 64));
  CHECK(conv1.update_flops == 2.0 * (64 * 3 * 7 * 7 + 2 * 64));

  // v1.5: layer2.0's stride is on its 3x3 conv (56x56 in, 28x28 out), and its projection
  // is a strided 1x1 conv.
  const WorkloadLayer& conv2 = layer_named(w, "layer2.0.conv2");
  CHECK(conv2.forward_flops == 2.0 * 128 * 28 * 28 * 128 * 3 * 3);
  CHECK(conv2.input_grad_flops == conv2.forward_flops);
  const WorkloadLayer& down = layer_named(w, "layer2.0.downsample.0");
  CHECK(down.forward_flops == 2.0 * 512 * 28 * 28 * 256);
  CHECK(down.grad_bytes == 4 * (512 * 256 + 2 * 512));

  // fc: 2048 -> 1000 with a bias.
  const WorkloadLayer& fc = w.layers.back();
  CHECK(fc.forward_flops == 2.0 * 2048 * 1000);
  CHECK(fc.grad_bytes == 4 * (2048 * 1000 + 1000));
}

TEST_CASE("bert-large: embeddings, 24 x (attention in 3 rows, mlp in 2), pooler", "[workload]") {
  const Workload w = builtin_workload("bert-large");
  REQUIRE(w.layers.size() == 1 + 5 * 24 + 1);
  CHECK(w.sample == "sequences of 512 tokens");
  const double T = 512, h = 1024, f = 4096;
  const WorkloadLayer& emb = w.layers.front();
  CHECK(emb.name == "embeddings");
  CHECK(emb.forward_flops == 0);
  CHECK(emb.grad_bytes == 4 * ((30522 + 512 + 2) * 1024 + 2 * 1024));

  const WorkloadLayer &qkv = w.layers[1], &core = w.layers[2], &out = w.layers[3];
  CHECK(qkv.name == "encoder.layer.0.attention.qkv");
  CHECK(core.name == "encoder.layer.0.attention.core");
  CHECK(out.name == "encoder.layer.0.attention.out");
  CHECK(qkv.forward_flops + core.forward_flops + out.forward_flops ==
        T * (4 * 2 * h * h + 2 * 2 * T * h));
  CHECK(qkv.weight_grad_flops + core.weight_grad_flops + out.weight_grad_flops ==
        T * 4 * 2 * h * h);
  CHECK(core.input_grad_flops == T * 2 * 2 * 2 * T * h);  // no weights: all input gradient
  CHECK(core.grad_bytes == 0);
  CHECK(qkv.grad_bytes + out.grad_bytes == 4 * (4 * (1024 * 1024 + 1024) + 2 * 1024));

  const WorkloadLayer &fc = w.layers[4], &proj = w.layers[5];
  CHECK(fc.name == "encoder.layer.0.mlp.fc");
  CHECK(proj.name == "encoder.layer.0.mlp.proj");
  CHECK(fc.forward_flops + proj.forward_flops == T * 2 * 2 * h * f);
  CHECK(fc.grad_bytes == 4 * (1024 * 4096 + 4096));
  CHECK(proj.grad_bytes == 4 * (4096 * 1024 + 1024 + 2 * 1024));

  const WorkloadLayer& pooler = w.layers.back();
  CHECK(pooler.name == "pooler");
  CHECK(pooler.forward_flops == 2 * h * h);  // the first token only
  CHECK(pooler.grad_bytes == 4 * (1024 * 1024 + 1024));
}

TEST_CASE("gpt2: the tied LM head computes but adds no gradient bytes", "[workload]") {
  const Workload w = builtin_workload("gpt2");
  REQUIRE(w.layers.size() == 1 + 5 * 12 + 1);
  CHECK(w.sample == "sequences of 1024 tokens");
  CHECK(w.layers.front().grad_bytes == 4 * (50257 + 1024) * 768);  // wte + wpe
  CHECK(w.layers[1].name == "h.0.attn.qkv");
  CHECK(w.layers[4].name == "h.0.mlp.fc");
  const WorkloadLayer& head = w.layers.back();
  CHECK(head.name == "ln_f+lm_head");
  CHECK(head.grad_bytes == 4 * 2 * 768);  // ln_f only: the head's weights are wte
  CHECK(head.forward_flops == 1024.0 * 2 * 768 * 50257);
  CHECK(head.weight_grad_flops == head.forward_flops);
  CHECK(builtin_workload("gpt2-xl").layers.size() == 1 + 5 * 48 + 1);
}

TEST_CASE("every built-in layer has numbers >= 0, in flops only", "[workload]") {
  for (const std::string& name : builtin_workload_names()) {
    const Workload w = builtin_workload(name);
    INFO(name);
    CHECK(w.name == name);
    CHECK_FALSE(w.source.empty());
    CHECK_FALSE(w.sample.empty());
    CHECK(w.uses_flops());
    CHECK_FALSE(w.uses_seconds());
    for (const WorkloadLayer& layer : w.layers) {
      INFO(layer.name);
      CHECK_FALSE(layer.name.empty());
      CHECK(layer.forward_flops >= 0);
      CHECK(layer.input_grad_flops >= 0);
      CHECK(layer.weight_grad_flops >= 0);
      CHECK(layer.update_flops >= 0);
      CHECK(layer.grad_bytes >= 0);
      CHECK(layer.forward_s == 0);
      CHECK(layer.input_grad_s == 0);
      CHECK(layer.weight_grad_s == 0);
      CHECK(layer.update_s == 0);
    }
  }
}

TEST_CASE("an unknown model name is a UsageError listing the built-in ones", "[workload]") {
  CHECK_THROWS_AS(builtin_workload("resnet5"), UsageError);
  CHECK_THROWS_WITH(builtin_workload("resnet5"),
                    "--workload resnet5: no such model; use resnet50, bert-large, gpt2, gpt2-xl, "
                    "or a file in ASTRA-sim 1.0's format");
  CHECK_THROWS_AS(builtin_workload(""), UsageError);
  CHECK_THROWS_AS(builtin_workload("GPT2"), UsageError);
}

// Checkpoints and --resume: a resumed run ends with the parameters of a run that was never
// stopped, bit for bit (in-process on 1 and 4 simulated nodes, and through the dsgd
// binary); the newest N are kept; a checkpoint of another configuration is refused; a
// damaged one is skipped or refused. And the fault test: a node killed at a seeded random
// step ends the run with exit 3 naming it, and its last checkpoint resumes to the end.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <array>
#include <map>
#include <random>

#include "cli_runner.h"
#include "core/data/rng.h"
#include "core/errors.h"
#include "core/io/npz.h"
#include "core/train/checkpoint.h"
#include "core/train/trainer.h"
#include "sim/cluster.h"
#include "param_diff.h"

using namespace dsgd;
using dsgd::same_bits;
using dsgd::test::dir_listing;
using dsgd::test::read_text;
using dsgd::test::run_dsgd;
using dsgd::test::TempDir;
using dsgd::test::write_file;

namespace {

namespace fs = std::filesystem;

// Bitwise equality of two parameter sets (not float ==: -0 vs 0 and NaNs count too).
// 300 samples in batches of 64: 5 batches an epoch, the last one short, so 23 steps cross
// four epoch boundaries (each a fresh permutation).
TrainConfig checkpoint_config() {
  TrainConfig c;
  c.model = ModelSpec::parse("mlp:16");
  c.global_batch = 64;
  c.steps = 23;
  c.epochs = 0;
  c.seed = 11;
  c.sgd = {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 1e-4f, .nesterov = true};
  return c;
}

// Trains on `nodes` simulated nodes; checkpoints every `every` steps into dir when given;
// resumes from `resume` when given. Returns rank 0's final parameters.
std::vector<NamedTensor> train_and_save(int nodes, const Dataset& data, const TrainConfig& config,
                                        const std::string& dir = "", int64_t every = 0,
                                        const TrainState* resume = nullptr) {
  std::vector<NamedTensor> params;
  sim::run_cluster({.nodes = nodes}, [&](Communicator& comm) {
    TrainHooks hooks;
    if (comm.rank() == 0 && every > 0) {
      hooks.checkpoint_every = every;
      const CheckpointConfig cc = checkpoint_config(config, data, comm.size());
      hooks.on_checkpoint = [&, cc](const TrainState& s) { save_checkpoint(dir, {cc, s}, 100); };
    }
    TrainResult r = train(comm, data, config, nullptr, hooks, resume);
    if (comm.rank() == 0) params = r.params;
  });
  return params;
}

int lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

// run_dsgd with the binary under coreutils' timeout: a run that hangs is killed and fails
// the test (exit 124) instead of hanging it. A bound on a hang, not a timing assertion.
test::CliResult run_dsgd_deadline(const std::string& args, int deadline_s = 60) {
  TempDir io;
  const std::string cmd = "timeout -k 5 " + std::to_string(deadline_s) + " " + DSGD_BINARY + " " +
                          args + " >" + (io / "out") + " 2>" + (io / "err") + " </dev/null";
  const int status = std::system(cmd.c_str());
  test::CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(io / "out");
  r.err = read_text(io / "err");
  return r;
}

// "train -q" and the flags of a small run, with some values replaced.
std::string train_flags(const std::map<std::string, std::string>& replace = {}) {
  std::map<std::string, std::string> f = {
      {"--model", "mlp:16"}, {"--data", "synthetic:train=300,test=60"},
      {"--batch", "64"},     {"--seed", "5"},
      {"--lr", "0.05"},      {"--momentum", "0.9"}};
  for (const auto& [flag, value] : replace)
    f[flag] = value;
  std::string s = "train -q ";
  for (const auto& [flag, value] : f)
    s += flag + (value.empty() ? "" : " " + value) + " ";
  return s;
}
const std::string kFlags = train_flags();

}  // namespace

TEST_CASE("a resumed run ends with the uninterrupted run's parameters, bit for bit",
          "[checkpoint]") {
  const Dataset data = load_dataset("synthetic:train=300,test=60");
  TrainConfig config = checkpoint_config();
  // 1 and 4 nodes, and 4 nodes with DDP's buckets (each tensor its own).
  for (auto [nodes, buckets] : {std::pair{1, 0}, {4, 0}, {4, 1}}) {
    config.bucket_bytes = config.first_bucket_bytes = buckets;
    DYNAMIC_SECTION(nodes << " nodes, bucket cap " << buckets) {
      TempDir dir;
      const auto full = train_and_save(nodes, data, config, dir.path().string(), 5);
      const auto files = list_checkpoints(dir.path().string());
      REQUIRE(files.size() == 4);  // steps 5, 10, 15, 20
      for (const std::string& file : files) {
        INFO(file);
        const Checkpoint c = read_checkpoint(file);
        CHECK(c.config.hash() == checkpoint_config(config, data, nodes).hash());
        CHECK(c.state.momentum.size() == 16 * 32 + 16 + 10 * 16 + 10);
        CHECK(c.state.epoch == (c.state.step - 1) / 5);
        CHECK(c.state.batch_in_epoch == (c.state.step - 1) % 5);
        const auto resumed = train_and_save(nodes, data, config, "", 0, &c.state);
        CHECK(same_bits(resumed, full));
      }
      // Restarting momentum instead (a fresh optimizer, as a resume that forgot the
      // buffer would) gives other numbers: the comparison above can see a missing buffer.
      Checkpoint c = read_checkpoint(files[1]);
      c.state.momentum.clear();
      CHECK_FALSE(same_bits(train_and_save(nodes, data, config, "", 0, &c.state), full));
    }
  }
}

TEST_CASE("a resumed run counts the steps it made itself (the summary's per-step times)",
          "[checkpoint]") {
  const Dataset data = load_dataset("synthetic:train=300,test=60");
  const TrainConfig config = checkpoint_config();
  TempDir dir;
  train_and_save(1, data, config, dir.path().string(), 5);
  const Checkpoint c = read_checkpoint(list_checkpoints(dir.path().string())[1]);
  REQUIRE(c.state.step == 10);
  TrainResult r;
  sim::run_cluster({.nodes = 1}, [&](Communicator& comm) {
    r = train(comm, data, config, nullptr, {}, &c.state);
  });
  REQUIRE(r.steps > 10);
  CHECK(r.steps_run == r.steps - 10);
}

TEST_CASE("dsgd train --resume continues a stopped run bit for bit", "[checkpoint][cli]") {
  for (int nodes : {1, 4}) {
    DYNAMIC_SECTION(nodes << " nodes") {
      TempDir dir;
      const std::string flags = kFlags + "--nodes " + std::to_string(nodes) + " ";
      const std::string ckpt = " --checkpoint-dir " + (dir / "ckpt");
      REQUIRE(run_dsgd(flags + "--steps 30 --save " + (dir / "full.npz")).exit_code == 0);
      // Stopped after 20 steps (the directory is created), then resumed to 30.
      auto r = run_dsgd(flags + "--steps 20 --checkpoint-every 10" + ckpt);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK_THAT(r.out, Catch::Contains("ckpt-0000000020.npz"));
      r = run_dsgd(flags + "--steps 30 --resume --save " + (dir / "resumed.npz") + ckpt);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK_THAT(r.out, Catch::Contains("resumed from") && Catch::Contains("(step 20)"));
      CHECK(dsgd::test::read_text(dir / "resumed.npz") == dsgd::test::read_text(dir / "full.npz"));
      // --resume FILE: the older checkpoint, given explicitly.
      r = run_dsgd(flags + "--steps 30 --save " + (dir / "from10.npz") + " --resume " +
                   (dir / "ckpt/ckpt-0000000010.npz"));
      REQUIRE(r.exit_code == 0);
      CHECK(dsgd::test::read_text(dir / "from10.npz") == dsgd::test::read_text(dir / "full.npz"));
      // A checkpoint at the last step: nothing left to train, the same parameters out.
      r = run_dsgd(flags + "--steps 20 --resume --save " + (dir / "at20.npz") + ckpt);
      REQUIRE(r.exit_code == 0);
      REQUIRE(run_dsgd(flags + "--steps 20 --save " + (dir / "full20.npz")).exit_code == 0);
      CHECK(dsgd::test::read_text(dir / "at20.npz") == dsgd::test::read_text(dir / "full20.npz"));
    }
  }
}

TEST_CASE("the newest --keep-checkpoints N are kept, each a complete checkpoint",
          "[checkpoint][cli]") {
  TempDir dir;
  REQUIRE(run_dsgd(kFlags + "--steps 20 --checkpoint-every 3 --checkpoint-dir " + (dir / "a"))
              .exit_code == 0);
  CHECK(dir_listing(dir.path() / "a") ==
        "ckpt-0000000012.npz ckpt-0000000015.npz ckpt-0000000018.npz ");
  REQUIRE(run_dsgd(kFlags + "--steps 20 --checkpoint-every 3 --keep-checkpoints 1 " +
                   "--checkpoint-dir " + (dir / "b"))
              .exit_code == 0);
  CHECK(dir_listing(dir.path() / "b") == "ckpt-0000000018.npz ");

  // What a checkpoint holds, as np.load sees it: the parameters under --save's names,
  // the momentum buffer, and a JSON document with the step, data position and config.
  const NpzArchive a = read_npz_archive(dir / "b/ckpt-0000000018.npz");
  std::vector<std::string> names;
  for (const NamedTensor& t : a.tensors)
    names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"layers.0.weight", "layers.0.bias", "layers.1.weight",
                                          "layers.1.bias", "optimizer.momentum_buffer"});
  REQUIRE(a.blobs.size() == 1);
  CHECK(a.blobs[0].name == "checkpoint.json");
  for (const char* key : {"\"step\": 18", "\"next_step\": 18", "\"epoch\": 3",
                          "\"batch_in_epoch\": 2", "\"config_hash\"", "\"world\": 4"})
    CHECK_THAT(a.blobs[0].bytes, Catch::Contains(key));
}

TEST_CASE("a checkpoint of another configuration is refused with one line, exit 2",
          "[checkpoint][cli]") {
  TempDir dir;
  const std::string ckpt = " --checkpoint-dir " + (dir / "ckpt");
  REQUIRE(run_dsgd(kFlags + "--steps 10 --checkpoint-every 5" + ckpt).exit_code == 0);
  const std::string before = dir.listing();
  for (auto [flag, value, needle] : std::vector<std::array<std::string, 3>>{
           {"--lr", "0.1", "--lr 0.05 there, 0.1 here"},
           {"--nodes", "2", "--nodes 4 there, 2 here"},
           {"--seed", "6", "--seed 5 there, 6 here"},
           {"--batch", "32", "--batch 64 there, 32 here"},
           {"--model", "mlp:8", "--model mlp:16 there, mlp:8 here"},
           {"--data", "synthetic:train=320,test=60", "--data differs"},
           {"--no-shuffle", "", "shuffling on there, off here"},
           {"--allreduce", "ring", "--allreduce auto there, ring here"},
           {"--momentum", "0.5", "--momentum 0.9 there, 0.5 here"},
           {"--bucket-mb", "1", "--bucket-mb 0 there, 1 here"},
       }) {
    auto r = run_dsgd(train_flags({{flag, value}}) + "--steps 20 --resume --save " +
                      (dir / "out.npz") + ckpt);
    INFO(flag << " " << value << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(needle) && Catch::Contains("ckpt-0000000010.npz") &&
                          Catch::Contains("resume with that run's flags"));
    CHECK(lines(r.err) == 1);
    CHECK(dir.listing() == before);  // no --save file, nothing else
  }
  auto r = run_dsgd(kFlags + "--steps 8 --resume" + ckpt);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("beyond this run's 8 steps"));
}

TEST_CASE("a damaged checkpoint: the newest intact one is used, or a given one refused",
          "[checkpoint][cli]") {
  TempDir dir;
  const std::string ckpt = " --checkpoint-dir " + (dir / "ckpt");
  const std::string newest = dir / "ckpt/ckpt-0000000010.npz";
  const std::string older = dir / "ckpt/ckpt-0000000005.npz";
  REQUIRE(run_dsgd(kFlags + "--nodes 2 --steps 10 --checkpoint-every 5" + ckpt).exit_code == 0);
  REQUIRE(run_dsgd(kFlags + "--nodes 2 --steps 15 --save " + (dir / "full.npz")).exit_code == 0);
  const std::string intact = dsgd::test::read_text(newest);

  SECTION("truncated") {
    write_file(newest, intact.substr(0, intact.size() / 2));
  }
  SECTION("empty") {
    write_file(newest, "");
  }
  SECTION("a flipped bit in a tensor") {
    std::string bad = intact;
    bad[bad.size() / 3] ^= 0x10;
    write_file(newest, bad);
  }
  SECTION("a changed step in checkpoint.json (the zip's CRC now stale)") {
    std::string bad = intact;
    const size_t at = bad.find("\"step\": 10");
    REQUIRE(at != std::string::npos);
    bad[at + 9] = '5';  // "step": 15
    write_file(newest, bad);
  }
  SECTION("a changed step in checkpoint.json, the archive written anew") {
    NpzArchive a = read_npz_archive(newest);
    REQUIRE(a.blobs.size() == 1);
    const size_t at = a.blobs[0].bytes.find("\"step\": 10");
    REQUIRE(at != std::string::npos);
    a.blobs[0].bytes[at + 9] = '5';
    write_npz(newest, a.tensors, a.blobs);  // fresh CRCs: only the JSON's checksum can tell
  }
  SECTION("an .npz that is not a checkpoint") {
    REQUIRE(run_dsgd(kFlags + "--nodes 2 --steps 1 --save " + newest).exit_code == 0);
  }
  // From the directory: a warning naming the damaged file, then the older one resumes,
  // still bit for bit.
  auto r = run_dsgd(kFlags + "--nodes 2 --steps 15 --resume --save " + (dir / "r.npz") + ckpt);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("warning") && Catch::Contains("ckpt-0000000010.npz"));
  CHECK_THAT(r.out, Catch::Contains("ckpt-0000000005.npz (step 5)"));
  CHECK(dsgd::test::read_text(dir / "r.npz") == dsgd::test::read_text(dir / "full.npz"));
  // Given explicitly: one line, exit 2, nothing written.
  fs::remove(dir / "r.npz");
  const std::string before = dir.listing();
  r = run_dsgd(kFlags + "--nodes 2 --steps 15 --save " + (dir / "r.npz") + " --resume " + newest);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("ckpt-0000000010.npz"));
  CHECK(lines(r.err) == 1);
  CHECK(dir.listing() == before);
  // Every checkpoint damaged: exit 2.
  write_file(older, "");
  r = run_dsgd(kFlags + "--nodes 2 --steps 15 --resume" + ckpt);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("all 2 checkpoints are damaged"));
}

TEST_CASE("a fresh run refuses a directory that holds checkpoints, and clears stale temporaries",
          "[checkpoint][cli]") {
  TempDir dir;
  const std::string ckpt = " --checkpoint-dir " + (dir / "ckpt");
  REQUIRE(run_dsgd(kFlags + "--steps 20 --checkpoint-every 5" + ckpt).exit_code == 0);
  const std::string before = dir.listing();
  // Another run (or this one afresh) would keep the older run's later steps and delete its
  // own newest checkpoint each time: refused, one line, nothing touched.
  auto r = run_dsgd(train_flags({{"--seed", "9"}}) + "--steps 10 --checkpoint-every 5" + ckpt);
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(lines(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains("already holds 3 checkpoints") &&
                        Catch::Contains("ckpt-0000000020.npz") && Catch::Contains("--resume"));
  CHECK(dir.listing() == before);
  // What a killed writer leaves is removed by the next run that writes there.
  write_file(dir / "ckpt/.ckpt-0000000025.npz.dsgd-tmp.k1ll3d", "half a checkpoint");
  r = run_dsgd(kFlags + "--steps 30 --resume --checkpoint-every 5" + ckpt);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(fs::exists(dir / "ckpt/.ckpt-0000000025.npz.dsgd-tmp.k1ll3d"));
  CHECK(dir_listing(dir.path() / "ckpt") ==
        "ckpt-0000000020.npz ckpt-0000000025.npz ckpt-0000000030.npz ");
}

TEST_CASE("checkpoint flags: bad values get one line and exit 2", "[checkpoint][cli]") {
  TempDir dir;
  const std::string before = dir.listing();
  for (auto [args, needle] : std::vector<std::pair<std::string, std::string>>{
           {"--checkpoint-every 5", "needs --checkpoint-dir"},
           {"--checkpoint-every -1 --checkpoint-dir " + (dir / "c"), "--checkpoint-every -1"},
           {"--checkpoint-every 5 --keep-checkpoints 0 --checkpoint-dir " + (dir / "c"),
            "--keep-checkpoints 0"},
           {"--resume", "--resume needs --checkpoint-dir"},
           {"--checkpoint-dir " + (dir / "c"), "nothing uses it"},
           {"--resume --checkpoint-dir " + (dir / "nowhere"), "no such directory"},
           {"--resume " + (dir / "missing.npz"), "does not exist"},
       }) {
    auto r = run_dsgd(kFlags + "--steps 5 " + args);
    INFO(args << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(needle));
    CHECK(lines(r.err) == 1);
    CHECK(dir.listing() == before);
  }
  fs::create_directory(dir / "empty");
  auto r = run_dsgd(kFlags + "--steps 5 --resume --checkpoint-dir " + (dir / "empty"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("no checkpoint"));
}

// The fault test of issue 9: 20 seeded runs, each losing one node (rank and step drawn
// from the seed) with checkpoints every 4 steps. Each run ends with exit 3 and names the
// node within the deadline; its newest checkpoint is intact; resuming from it without the
// crash ends with the uninterrupted run's parameters, bit for bit.
TEST_CASE("a node killed at a random step: exit 3 naming it, the last checkpoint resumes",
          "[checkpoint][cli][fault]") {
  constexpr int kNodes = 4, kSteps = 24, kEvery = 4;
  TempDir dir;
  const std::string flags =
      kFlags + "--nodes 4 --timeout 2s --steps " + std::to_string(kSteps) + " ";
  REQUIRE(run_dsgd_deadline(flags + "--save " + (dir / "full.npz")).exit_code == 0);
  const std::vector<NamedTensor> full = read_npz(dir / "full.npz");
  // The same run as the flags describe, for resuming in this process.
  const Dataset data = load_dataset("synthetic:train=300,test=60");
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:16");
  config.global_batch = 64;
  config.steps = kSteps;
  config.epochs = 0;
  config.seed = 5;
  config.sgd = {.lr = 0.05f, .momentum = 0.9f};
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    data::Rng rng(seed, 9);
    const int rank = static_cast<int>(rng.uniform_index(kNodes));
    // From kEvery + 2: a node that begins step S has seen every rank finish step S - 2, so
    // rank 0 has written the checkpoint of step kEvery at least.
    const int step = kEvery + 2 + static_cast<int>(rng.uniform_index(kSteps - kEvery - 1));
    const std::string ckpt = dir / ("ckpt" + std::to_string(seed));
    INFO("seed " << seed << ": --crash " << rank << "@" << step);
    auto r = run_dsgd_deadline(flags + "--checkpoint-every 4 --checkpoint-dir " + ckpt +
                               " --crash " + std::to_string(rank) + "@" + std::to_string(step));
    INFO(r.err);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Contains("lost rank " + std::to_string(rank)));

    // The newest checkpoint is complete (no temporary file beside it) and at a step the
    // run had reached.
    const auto files = list_checkpoints(ckpt);
    REQUIRE(!files.empty());
    for (const auto& e : fs::directory_iterator(ckpt))
      CHECK(e.path().extension() == ".npz");
    const Checkpoint last = read_checkpoint(files.back());
    CHECK(last.state.step <= step - 1);
    CHECK(last.state.step >= (step - 2) / kEvery * kEvery);

    // Resumed without the crash (in this process: 20 more starts of the binary would only
    // add start-up time; the binary's --resume is tested above).
    check_same_config(last.config, checkpoint_config(config, data, kNodes), files.back());
    CHECK(same_bits(train_and_save(kNodes, data, config, "", 0, &last.state), full));
    fs::remove_all(ckpt);
  }
}

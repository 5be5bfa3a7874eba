// Bad input, everywhere: each row runs the real `dsgd` binary on one bad flag value or bad
// file and asserts what a user gets: exit code 2, exactly one line on stderr that contains
// the row's key words (what is wrong, where, what to do), and no output file left behind
// (--save, --metrics, --trace, --json and merge outputs all point into an empty directory
// that must stay empty). Every row is also a row of docs/errors.md's "Bad input" table, and a
// test below checks that the two lists agree.
//
// Rows already asserted elsewhere are not repeated here (they are in docs/errors.md):
//   test_cli.cpp "bad input: exit code 2, a one-line error, nothing half-written":
//     csv missing file, ragged row, word in a field, label -1, idx wrong magic, npz not a
//     zip, --nodes 0, --nodes 100000, --latency 2parsecs, --bandwidth fast, --model mlp:abc,
//     --data nowhere, --batch 0, --lr -1, --allreduce fastest, --save into a missing
//     directory, --steps 5 --epochs 5, an unknown flag.
//   test_bench_cli.cpp "bench collective refuses bad flags with exit code 2 and one line":
//     --op alltoall, --algorithm fast, --min-bytes 4X, --max-bytes 2G, --nodes 0, --iters 0,
//     --warmup -1, --step-factor 1, --root 4, --reduce-op mean, --backend tcp.
//   test_gui_bad_input.cpp (dsgd-gui --replay / --metrics, in dsgd_gui_tests).
#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <zip.h>

#include "cli_runner.h"
#include "core/io/npz.h"
#include "zip_file.h"

using namespace dsgd;
using dsgd::test::make_zip;
using dsgd::test::read_text;
using dsgd::test::run_dsgd;
using dsgd::test::TempDir;
using dsgd::test::write_file;

namespace {

struct Row {
  std::string input;               // as docs/errors.md's table shows it
  std::string args;                // dsgd's arguments; {d} is the directory of the files
  std::vector<std::string> words;  // the one line on stderr contains every one
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
    s.replace(at, from.size(), to);
  return s;
}

// An IDX header: magic 0x0000 08 NDIM, then the dimensions, big-endian.
std::string idx_header(int type, const std::vector<uint32_t>& dims) {
  std::string h = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int shift : {24, 16, 8, 0})
      h.push_back(static_cast<char>((d >> shift) & 0xff));
  return h;
}

// A zip of one deflated entry whose directory claims `declared` bytes uncompressed while
// 16 bytes follow: what an attacker hands to --init (no tool writes it, so by hand).
void make_zip_claiming(const std::string& path, const std::string& name, uint32_t declared) {
  std::string out;
  auto le = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
      out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  const uint32_t data_bytes = 16;
  le(0x04034b50, 4), le(20, 2), le(0, 2), le(8, 2), le(0, 4), le(0, 4);  // local header
  le(data_bytes, 4), le(declared, 4), le(name.size(), 2), le(0, 2);
  out += name + std::string(data_bytes, '\x03');
  const size_t directory = out.size();
  le(0x02014b50, 4), le(20, 2), le(20, 2), le(0, 2), le(8, 2), le(0, 4), le(0, 4);
  le(data_bytes, 4), le(declared, 4), le(name.size(), 2), le(0, 2), le(0, 2), le(0, 2);
  le(0, 2), le(0, 4), le(0, 4);  // attributes, offset of the local header
  out += name;
  const size_t directory_bytes = out.size() - directory;
  le(0x06054b50, 4), le(0, 2), le(0, 2), le(1, 2), le(1, 2), le(directory_bytes, 4);
  le(directory, 4), le(0, 2);
  std::ofstream(path, std::ios::binary) << out;
}

// Parameters of `--model mlp:4` on the default synthetic data (32 features, 10 classes).
std::vector<NamedTensor> mlp4_params() {
  return {{"layers.0.weight", Tensor({4, 32}, 0.1f)},
          {"layers.0.bias", Tensor({4}, 0.0f)},
          {"layers.1.weight", Tensor({10, 4}, 0.1f)},
          {"layers.1.bias", Tensor({10}, 0.0f)}};
}

// A file's path in the directory of bad files: at("x.csv").
struct InDir {
  std::string dir;
  std::string operator()(const std::string& name) const { return dir + "/" + name; }
};

// CSV files: empty, UTF-16, NUL, a FIFO, 1 TiB of holes, bad values and shapes.
void make_csv_files(const InDir& at) {
  write_file(at("empty.csv"), "");
  write_file(at("utf16.csv"), std::string("\xFF\xFE"
                                          "1\0,\0"
                                          "2\0,\0"
                                          "0\0\n\0",
                                          14));
  write_file(at("nul.csv"), std::string("1,2,0\n3,\0"
                                        "4,1\n",
                                        12));
  REQUIRE(::mkfifo(at("fifo").c_str(), 0600) == 0);  // a reader would wait for a writer
  write_file(at("sparse.csv"), "");
  std::filesystem::resize_file(at("sparse.csv"), uint64_t{1} << 40);  // 1 TiB of holes
  write_file(at("header.csv"), "# a header and nothing else\nf1,f2,label\n");
  write_file(at("nan.csv"), "1,2,0\n3,nan,1\n");
  write_file(at("inf.csv"), "1,2,0\n3,-inf,1\n");
  write_file(at("huge.csv"), "1,2,0\n3,1e39,1\n");
  write_file(at("blank.csv"), "1,2,0\n3,,1\n");
  write_file(at("frac.csv"), "1,2,0\n3,4,1.5\n");
  write_file(at("big.csv"), "1,2,0\n3,4,70000\n");
  write_file(at("cut.csv"), "1,2,0\n3,4,1\n5,6,0\n7,");  // a file cut short mid-row
  std::string few;
  for (int i = 0; i < 5; ++i)
    few += "1,2,0\n";
  write_file(at("few.csv"), few);
  std::string wide;
  for (int i = 0; i < 20; ++i)
    wide += "1,2,3,0\n";
  write_file(at("wide.csv"), wide);
  write_file(at("narrow.csv"), few);
}

// IDX files, and a gzip file cut in half.
void make_idx_files(const InDir& at) {
  std::string images = idx_header(0x08, {20, 2, 2}) + std::string(80, '\x10');
  std::string labels = idx_header(0x08, {20}) + std::string(20, '\x01');
  write_file(at("images.idx"), images);
  write_file(at("labels.idx"), labels);
  write_file(at("short-header.idx"), idx_header(0x08, {20, 2, 2}).substr(0, 9));
  write_file(at("short-data.idx"), images.substr(0, images.size() - 7));
  write_file(at("float.idx"), idx_header(0x0D, {20, 2, 2}) + std::string(320, '\0'));
  write_file(at("labels19.idx"), idx_header(0x08, {19}) + std::string(19, '\x01'));
  write_file(at("empty.idx"), "");
  write_file(at("trailing.idx"), images + "xyz");
  // A gzip file cut in half.
  REQUIRE(std::system(("gzip -n -c " + at("images.idx") + " > " + at("full.idx.gz")).c_str()) == 0);
  std::string gz = read_text(at("full.idx.gz"));
  write_file(at("cut.idx.gz"), gz.substr(0, gz.size() / 2));
}

// TOML scenarios.
void make_toml_files(const InDir& at) {
  write_file(at("ok.toml"), "nodes = 4\n");
  write_file(at("syntax.toml"), "nodes = 4\nlatency = = 3\n");
  write_file(at("unit.toml"), "nodes = 4\n[network]\nlatency = \"2parsecs\"\n");
  write_file(at("typo.toml"), "nodes = 4\n[network]\nlatncy = \"2ms\"\n");
  write_file(at("nodes.toml"), "nodes = -1\n");
  write_file(at("type.toml"), "[network]\nlatency = 5\n");
  write_file(at("loss.toml"), "[network]\nloss = 2\n");
  write_file(at("kind.toml"), "[[fault]]\nkind = \"meteor\"\nrank = 1\n");
  write_file(at("rank.toml"),
             "nodes = 4\n[[fault]]\nkind = \"straggler\"\nrank = 7\nfactor = 2.0\n");
  write_file(at("bool.toml"), "nodes = true\n");
  write_file(at("until.toml"),
             "nodes = 4\n[[fault]]\nkind = \"link_down\"\nfrom = 0\nto = 1\nat = \"2s\"\nuntil = "
             "\"1s\"\n");
  write_file(at("overlap.toml"),
             "nodes = 4\n[[fault]]\nkind = \"partition\"\ngroups = [[0, 1], [1, 2]]\n");
  write_file(at("link9.toml"),
             "nodes = 4\n[[network.link]]\nfrom = 0\nto = 9\nlatency = \"1ms\"\n");
}

// NPZ parameters (for --model mlp:4).
void make_npz_files(const InDir& at) {
  std::vector<NamedTensor> p = mlp4_params();
  write_npz(at("good.npz"), p);
  const std::string good = read_text(at("good.npz"));
  write_file(at("cut.npz"), good.substr(0, good.size() / 2));
  write_file(at("empty.npz"), "");
  std::vector<NamedTensor> renamed = p;
  renamed[0].name = "fc1.weight";
  write_npz(at("names.npz"), renamed);
  std::vector<NamedTensor> reshaped = p;
  reshaped[0].tensor = Tensor({32, 4}, 0.1f);
  write_npz(at("shape.npz"), reshaped);
  write_npz(at("fewer.npz"), {p[0], p[1]});
  std::vector<NamedTensor> extra = p;
  extra.push_back({"layers.2.weight", Tensor({10, 10}, 0.0f)});
  write_npz(at("extra.npz"), extra);
  std::vector<NamedTensor> nan = p;
  nan[2].tensor[3] = std::numeric_limits<float>::quiet_NaN();
  write_npz(at("nan.npz"), nan);
  make_zip(at("notes.npz"),
           {{"layers.0.weight.npy", encode_npy(p[0].tensor)}, {"notes.txt", "trained on Tuesday"}});
  std::string npy = encode_npy(p[1].tensor);
  npy.replace(npy.find("'<f4'"), 5, "'<i4'");  // same length: header and data stay aligned
  make_zip(at("int32.npz"), {{"layers.0.bias.npy", npy}});
  make_zip_claiming(at("claims3g.npz"), "unused.npy", 3u << 30);
}

// Chrome traces.
void make_trace_files(const InDir& at) {
  write_file(at("empty.json"), "");
  write_file(at("cut.json"), "{\"traceEvents\": [{\"ph\": \"X\", \"pid\": 0,");
  write_file(at("object.json"), "{\"events\": []}");
  write_file(at("nodur.json"), R"({"traceEvents":[{"ph":"X","pid":0,"tid":0,"ts":1}]})");
  write_file(at("huge.json"), R"({"traceEvents":[{"ph":"X","pid":0,"tid":0,"ts":1e999,"dur":1}]})");
  write_file(at("ok.json"), "{\"traceEvents\": []}");
  // A message from rank 0 to rank 1, in a trace of its own and as a summary of 8 ranks.
  const std::string message =
      R"({"traceEvents":[{"name":"send to 1","cat":"p2p","ph":"X","pid":0,"tid":1,"ts":0,)"
      R"("dur":1,"args":{"dir":"send","src":0,"dst":1,"tag":0,"k":0,"bytes":4}}])";
  write_file(at("two.json"), message + "}");
  write_file(at("summary.json"), message + R"(,"otherData":{"summary":{"ranks":8,"groups":2}}})");
}

// Every bad file the rows name, in `d`.
void make_files(const std::string& d) {
  const InDir at{d};
  make_csv_files(at);
  make_idx_files(at);
  make_toml_files(at);
  make_npz_files(at);
  make_trace_files(at);
}

const std::string kOut = " --save {d}/out/p.npz --metrics {d}/out/m.jsonl --trace {d}/out/t.json";

// dsgd train with one bad flag value; the outputs go to {d}/out.
std::vector<Row> training_mode_rows();
std::vector<Row> backend_rows();

// The trace's lanes and the observer stream (and what a node is called there).
std::vector<Row> output_rows() {
  return {
      {"node --name of 40 bytes",
       "node --rank 1 --world 3 --rendezvous 127.0.0.1:29500 --token t --name "
       "abcdefghijabcdefghijabcdefghijabcdefghij",
       {"--name", "at most 32 bytes"}},
      {"node --rank 1 (no --world)",
       "node --rank 1 --rendezvous 127.0.0.1:29500 --token t",
       {"--world is required with --rank", "classroom"}},
      {"--monitor without a port",
       "train -q --monitor localhost" + kOut,
       {"--monitor localhost", "HOST:PORT", "dsgd-gui --watch"}},
      {"--trace-groups without --trace",
       "train -q --trace-groups 4",
       {"--trace-groups 4 without --trace", "add --trace FILE"}},
      {"--trace-groups -1",
       "train -q --trace {d}/out/t.json --trace-groups -1",
       {"--trace-groups"}},
  };
}

std::vector<Row> flag_rows() {
  const auto train = [](const std::string& flags) { return "train -q " + flags + kOut; };
  std::vector<Row> rows{
      {"--nodes -3", train("--nodes -3"), {"--nodes -3", "1 to 256"}},
      {"--nodes abc", train("--nodes abc"), {"--nodes", "abc", "dsgd train --help"}},
      {"--batch -5", train("--batch -5"), {"--batch -5", "at least 1"}},
      {"--batch 99999999999", train("--batch 99999999999"), {"--batch", "8192", "at most"}},
      {"--lr 0", train("--lr 0"), {"--lr 0", "positive"}},
      {"--lr nan", train("--lr nan"), {"--lr nan", "positive"}},
      {"--lr 1e400", train("--lr 1e400"), {"--lr", "positive"}},
      {"--momentum 5", train("--momentum 5"), {"--momentum 5", "[0, 1)"}},
      {"--weight-decay -1", train("--weight-decay -1"), {"--weight-decay -1", ">= 0"}},
      {"--steps 0", train("--steps 0"), {"--steps", "'0'", "1 or more"}},
      {"--steps -1", train("--steps -1"), {"--steps", "'-1'", "1 or more"}},
      {"--steps 10000000000000", train("--steps 10000000000000"), {"--steps", "use fewer"}},
      {"--epochs 0", train("--epochs 0"), {"--epochs", "'0'", "1 or more"}},
      {"--epochs -2", train("--epochs -2"), {"--epochs", "'-2'", "1 or more"}},
      {"--epochs 1.5", train("--epochs 1.5"), {"--epochs", "'1.5'", "whole number"}},
      {"--seed -1", train("--seed -1"), {"--seed", "'-1'", "0 or more"}},
      {"--eval-every -1", train("--eval-every -1"), {"--eval-every", "0"}},
      {"--model mlp:0", train("--model mlp:0"), {"mlp:0", "valid forms"}},
      {"--model mlp:100000000", train("--model mlp:100000000"), {"mlp:100000000", "1..1048576"}},
      {"--model resnet", train("--model resnet"), {"resnet", "valid forms"}},
      {"--model cnn:resnet", train("--model cnn:resnet"), {"cnn:resnet", "cnn:lenet"}},
      {"--model cnn:lenet --data synthetic",
       train("--model cnn:lenet --data synthetic"),
       {"cnn:lenet", "square grey image", "32 features"}},
      {"--model cnn:lenet --device cuda",
       train("--model cnn:lenet --device cuda"),
       {"cnn:lenet", "--device cpu only"}},
      {"--latency -2ms", train("--latency -2ms"), {"--latency", "negative"}},
      {"--latency 2", train("--latency 2"), {"--latency '2'", "unit"}},
      {"--latency 1e9s", train("--latency 1e9s"), {"--latency", "3600s"}},
      {"--bandwidth -1Gbit", train("--bandwidth -1Gbit"), {"--bandwidth", "positive"}},
      {"--bandwidth 5", train("--bandwidth 5"), {"--bandwidth '5'", "bits per second"}},
      {"--jitter -1ms", train("--jitter -1ms"), {"--jitter", "negative"}},
      {"--jitter 1kg", train("--jitter 1kg"), {"--jitter '1kg'", "unit"}},
      {"--loss 2", train("--loss 2"), {"--loss '2'", "0 to 0.5"}},
      {"--eager-limit 4x", train("--eager-limit 4x"), {"--eager-limit '4x'", "K, M or G"}},
      {"--eager-limit -1", train("--eager-limit -1"), {"--eager-limit '-1'", "not a size"}},
      {"--loss nan", train("--loss nan"), {"--loss 'nan'", "0 to 0.5"}},
      {"--straggler 2", train("--straggler 2"), {"--straggler '2'", "RANK:FACTOR"}},
      {"--straggler 1:0.5", train("--straggler 1:0.5"), {"--straggler '1:0.5'", "1 to 1000"}},
      {"--straggler 9:3", train("--straggler 9:3"), {"rank 9", "4 nodes"}},
      {"--crash 1@-3s", train("--crash 1@-3s"), {"--crash '1@-3s'", "RANK@STEP"}},
      {"--crash 7@5", train("--crash 7@5"), {"rank 7", "4 nodes"}},
      {"--timeout 0", train("--timeout 0"), {"--timeout", "positive"}},
      {"--timeout -5s", train("--timeout -5s"), {"--timeout '-5s'", "positive"}},
      {"--timeout forever", train("--timeout forever"), {"--timeout 'forever'", "unit"}},
      {"--topology ring", train("--topology ring"), {"--topology", "mesh, switch or racks"}},
      {"--save given twice", train("--save {d}/out/q.npz"), {"--save", "dsgd train --help"}},
      {"--metrics DIRECTORY", "train -q --metrics {d}", {"--metrics", "is a directory"}},
      {"--save ''", "train -q --save ''", {"--save", "empty value"}},
      {"--latency ''", train("--latency ''"), {"--latency", "empty value"}},
      {"--save and --metrics on one file",
       "train -q --save {d}/out/x.npz --metrics {d}/out/x.npz",
       {"--save", "is also --metrics"}},
      {"--save onto the training CSV",
       "train -q --data csv:{d}/nan.csv --save {d}/nan.csv",
       {"--save", "overwrite the --data file"}},
      {"--trace onto the scenario file",
       "train -q --scenario {d}/ok.toml --trace {d}/ok.toml",
       {"--trace", "overwrite the --scenario file"}},
      {"--trace into a missing directory",
       "train -q --trace {d}/missing/t.json",
       {"--trace", "does not exist", "create it"}},
  };
  for (auto more : {training_mode_rows(), backend_rows(), output_rows()})
    for (Row& row : more)
      rows.push_back(std::move(row));
  return rows;
}

// dsgd train with a backend, device or choice only one backend has, given where it does not
// run.
std::vector<Row> backend_rows() {
  const auto train = [](const std::string& flags) { return "train -q " + flags + kOut; };
  return {
      {"--device gpu", train("--device gpu"), {"--device gpu", "--device cpu"}},
      {"--trace-groups with --backend mpi",
       train("--backend mpi --trace-groups 4"),
       {"--trace-groups 4 with --backend mpi", "dsgd trace summarize"}},
      {"--backend tcp", train("--backend tcp"), {"--backend", "tcp", "dsgd train --help"}},
      {"--payload phantom",
       train("--payload phantom"),
       {"--payload phantom runs on --backend simgrid only", "add --backend simgrid"}},
      {"--compute measured",
       train("--compute measured"),
       {"--compute measured runs on --backend simgrid only", "drop --compute"}},
      {"--topology fat-tree",
       train("--topology fat-tree"),
       {"--topology fat-tree is built by SimGrid only", "add --backend simgrid"}},
      {"--gflops 0", train("--gflops 0"), {"--gflops 0", "0.001 to 1e9"}},
  };
}

// dsgd train with a bad choice of training mode: buckets, local SGD, compression,
// parameter servers, elastic membership.
std::vector<Row> training_mode_rows() {
  const auto train = [](const std::string& flags) { return "train -q " + flags + kOut; };
  return {
      {"--bucket-mb -1", train("--bucket-mb -1"), {"--bucket-mb -1", "DDP uses 25"}},
      {"--first-bucket-mb 0",
       train("--bucket-mb 25 --first-bucket-mb 0"),
       {"--first-bucket-mb 0", "DDP uses 1"}},
      {"--first-bucket-mb 0.5",
       train("--first-bucket-mb 0.5"),
       {"--first-bucket-mb 0.5", "add --bucket-mb"}},
      {"--local-sgd 0", train("--local-sgd 0"), {"--local-sgd", "'0'", "1 or more"}},
      {"--local-sgd-start 5",
       train("--local-sgd-start 5"),
       {"--local-sgd-start 5", "add --local-sgd H"}},
      {"--local-sgd 8 --checkpoint-every 5",
       train("--local-sgd 8 --checkpoint-every 5 --checkpoint-dir {d}/ck"),
       {"--local-sgd 8", "checkpoint (rank 0's) cannot hold"}},
      {"--compress zip", train("--compress zip"), {"--compress \"zip\"", "powersgd:R"}},
      {"--compress topk:2", train("--compress topk:2"), {"topk:2", "at most 1"}},
      {"--powersgd-start 10",
       train("--powersgd-start 10"),
       {"--powersgd-start 10", "add --compress powersgd:R"}},
      {"--compress fp16 --local-sgd 4",
       train("--compress fp16 --local-sgd 4"),
       {"--compress fp16 and --local-sgd 4", "use one of them"}},
      {"--compress powersgd:1 --checkpoint-every 5",
       train("--compress powersgd:1 --checkpoint-every 5 --checkpoint-dir {d}/ck"),
       {"--compress powersgd:1", "drop --checkpoint-every"}},
      {"--compress fp16 --device cuda",
       train("--compress fp16 --device cuda"),
       {"--compress fp16", "--device cpu only"}},
      {"--bucket-mb 25 --device cuda",
       train("--bucket-mb 25 --device cuda"),
       {"--bucket-mb 25", "--device cpu only"}},
      {"--parameter-servers 4 --nodes 4",
       train("--parameter-servers 4 --nodes 4"),
       {"--parameter-servers 4 of 4 nodes", "no worker"}},
      {"--max-staleness 2",
       train("--max-staleness 2"),
       {"--max-staleness 2", "--parameter-servers"}},
      {"--parameter-servers 1 --compress fp16",
       train("--parameter-servers 1 --compress fp16"),
       {"--parameter-servers 1 and --compress fp16", "use one of them"}},
      {"--parameter-servers 1 --local-sgd 4",
       train("--parameter-servers 1 --local-sgd 4"),
       {"--parameter-servers 1 and --local-sgd 4", "use one of them"}},
      {"--elastic spare", train("--elastic spare"), {"--elastic spare", "in-process"}},
      {"--max-restarts 2", train("--max-restarts 2"), {"--max-restarts 2", "add --elastic"}},
      {"--elastic none --max-restarts 2",
       train("--elastic none --max-restarts 2"),
       {"--max-restarts 2", "--elastic none"}},
      {"--elastic restart (no checkpoints)",
       train("--elastic restart"),
       {"--elastic restart", "add --checkpoint-every K"}},
      {"--elastic in-process --compress topk:0.1",
       train("--elastic in-process --compress topk:0.1"),
       {"--elastic in-process and --compress topk:0.1", "error feedback"}},
      {"--elastic in-process --parameter-servers 1",
       train("--elastic in-process --parameter-servers 1"),
       {"--elastic in-process and --parameter-servers 1", "dies with it"}},
      {"--elastic in-process --backend mpi",
       train("--elastic in-process --backend mpi"),
       {"--elastic in-process and --backend mpi", "scripts/mpirun-elastic", "--backend sim"}},
  };
}

// The other commands: bench collective, lesson, trace, compare.
std::vector<Row> command_rows() {
  const std::string bench = "bench collective --json {d}/out/rows.json ";
  const std::string node = "node --rank 1 --world 3 --rendezvous 127.0.0.1:29500 --token t ";
  return {
      {"node --elastic in-process --crash 0@5",
       node + "--elastic in-process --crash 0@5",
       {"--crash 0@5", "hosts the rendezvous", "crash another rank"}},
      {"node --join --rank 1",
       "node --world 3 --rendezvous 127.0.0.1:29500 --token t --elastic in-process --join --rank 1",
       {"--join and --rank 1", "drop --rank"}},
      {"node --join (no --elastic)",
       "node --world 3 --rendezvous 127.0.0.1:29500 --token t --join",
       {"--join", "--elastic"}},
      {"node (no --rank)",
       "node --world 3 --rendezvous 127.0.0.1:29500 --token t",
       {"--rank is required", "--join"}},
      {"node --resume",
       node + "--resume --checkpoint-dir {d}/out/ck",
       {"--resume", "dsgd train --resume --nodes 3"}},
      {"compare --runs =5", "compare -q --runs =5", {"--runs \"=5\"", "flag=value"}},
      {"compare --runs latency=soon",
       "compare -q --runs sync latency=soon",
       {"--runs \"latency=soon\"", "--latency"}},
      {"compare --plot c.gif",
       "compare -q --runs sync --plot {d}/out/c.gif",
       {"--plot", "c.gif", ".png or .svg"}},
      {"bench collective --min-bytes -1",
       bench + "--min-bytes -1",
       {"--min-bytes '-1'", "K, M or G"}},
      {"bench collective --max-bytes 100T", bench + "--max-bytes 100T", {"--max-bytes '100T'"}},
      {"bench collective --max-bytes 8G", bench + "--max-bytes 8G", {"--max-bytes 8G", "1G"}},
      {"bench collective --min-bytes 1M --max-bytes 1K",
       bench + "--min-bytes 1M --max-bytes 1K",
       {"--min-bytes 1M", "--max-bytes 1K"}},
      {"bench collective --nodes 1000", bench + "--nodes 1000", {"--nodes 1000", "1 to 256"}},
      {"bench collective --step-factor nan", bench + "--step-factor nan", {"--step-factor"}},
      {"bench collective --timeout 0", bench + "--timeout 0", {"--timeout", "positive"}},
      {"bench (no collective)", "bench", {"subcommand", "dsgd bench --help"}},
      {"lesson 0", "lesson 0", {"no lesson 0", "dsgd lesson list"}},
      {"lesson -1", "lesson -1", {"no lesson -1", "dsgd lesson list"}},
      {"lesson 2x", "lesson 2x", {"'2x'", "lesson number"}},
      {"lesson 99", "lesson 99", {"no lesson 99", "dsgd lesson list"}},
      {"lesson (no number)", "lesson", {"lesson is required", "dsgd lesson --help"}},
      {"lesson 2 --lang fr", "lesson 2 --lang fr", {"--lang fr", "en"}},
      {"lesson 2 --nodes 100", "lesson 2 --nodes 100", {"--nodes 100", "lesson 2 runs on"}},
      {"lesson 2 --seed -1", "lesson 2 --seed -1", {"--seed", "0 or more"}},
      {"lesson 5 --check missing file",
       "lesson 5 --check {d}/none.cpp",
       {"--check", "none.cpp", "no such file"}},
      {"trace check missing file", "trace check {d}/none.json", {"none.json", "does not exist"}},
      {"trace check a FIFO", "trace check {d}/fifo", {"fifo", "a pipe (FIFO)", "a trace"}},
      {"trace check empty file",
       "trace check {d}/empty.json",
       {"empty.json", "not a Chrome trace"}},
      {"trace check truncated JSON",
       "trace check {d}/cut.json",
       {"cut.json", "invalid JSON", "dsgd train --trace"}},
      {"trace check no traceEvents", "trace check {d}/object.json", {"object.json", "traceEvents"}},
      {"trace check slice without dur", "trace check {d}/nodur.json", {"nodur.json", "dur"}},
      {"trace check number out of range",
       "trace check {d}/huge.json",
       {"huge.json", "invalid JSON", "number overflow"}},
      {"trace merge of a truncated file",
       "trace merge {d}/out/merged.json {d}/ok.json {d}/cut.json",
       {"cut.json", "invalid JSON"}},
      {"trace merge into a missing directory",
       "trace merge {d}/missing/merged.json {d}/ok.json",
       {"missing/merged.json", "cannot write"}},
      {"trace summarize into more groups than ranks",
       "trace summarize {d}/two.json {d}/out/s.json --groups 4",
       {"two.json", "holds 2 ranks", "--groups 1 or fewer"}},
      {"trace summarize of a summary",
       "trace summarize {d}/summary.json {d}/out/s.json",
       {"summary.json", "a summary already", "summarize the full trace"}},
      {"trace summarize onto its input",
       "trace summarize {d}/two.json {d}/two.json",
       {"two.json", "is the input", "write another file"}},
  };
}

// Data files: --data csv:..., idx:..., synthetic:..., fashion-mnist:...
std::vector<Row> data_rows() {
  const auto train = [](const std::string& data) { return "train -q --data " + data + kOut; };
  return {
      {"csv: empty file", train("csv:{d}/empty.csv"), {"empty.csv", "no data rows"}},
      {"csv: header only", train("csv:{d}/header.csv"), {"header.csv", "no data rows"}},
      {"csv: NaN feature", train("csv:{d}/nan.csv"), {"nan.csv:2", "NaN", "clean the data"}},
      {"csv: Inf feature", train("csv:{d}/inf.csv"), {"inf.csv:2", "infinite"}},
      {"csv: 1e39 feature", train("csv:{d}/huge.csv"), {"huge.csv:2", "float32 range"}},
      {"csv: empty field", train("csv:{d}/blank.csv"), {"blank.csv:2", "not a number"}},
      {"csv: label 1.5", train("csv:{d}/frac.csv"), {"frac.csv:2", "'1.5'", "class index"}},
      {"csv: label 70000", train("csv:{d}/big.csv"), {"big.csv:2", "too large", "65535"}},
      {"csv: file cut mid-row", train("csv:{d}/cut.csv"), {"cut.csv:4", "expected 3 fields"}},
      {"csv: fewer than 10 rows", train("csv:{d}/few.csv"), {"few.csv", "at least 10"}},
      {"csv: train and test differ in width",
       train("csv:{d}/wide.csv,{d}/narrow.csv"),
       {"narrow.csv:1", "expected 4 fields"}},
      {"csv: a directory", train("csv:{d}"), {"cannot read", "it is a directory, not a file"}},
      {"csv: no path", train("csv:"), {"csv:", "needs file paths"}},
      {"idx: empty file", train("idx:{d}/empty.idx,{d}/labels.idx"), {"empty.idx", "4-byte magic"}},
      {"idx: header cut short",
       train("idx:{d}/short-header.idx,{d}/labels.idx"),
       {"short-header.idx", "truncated"}},
      {"idx: data cut short",
       train("idx:{d}/short-data.idx,{d}/labels.idx"),
       {"short-data.idx", "truncated", "expected 80 bytes"}},
      {"idx: bytes after the data",
       train("idx:{d}/trailing.idx,{d}/labels.idx"),
       {"trailing.idx", "after the 80 bytes"}},
      {"idx: float elements",
       train("idx:{d}/float.idx,{d}/labels.idx"),
       {"float.idx", "0x0D", "unsigned bytes"}},
      {"idx: 20 images, 19 labels",
       train("idx:{d}/images.idx,{d}/labels19.idx"),
       {"20 images", "19 labels"}},
      {"idx: labels file given as images",
       train("idx:{d}/labels.idx,{d}/labels.idx"),
       {"labels.idx", "magic"}},
      {"idx: gzip cut in half", train("idx:{d}/cut.idx.gz,{d}/labels.idx"), {"cut.idx.gz"}},
      {"idx: three paths", train("idx:{d}/a,{d}/b,{d}/c"), {"idx takes 2 or 4 paths"}},
      {"synthetic:train=-5", train("synthetic:train=-5"), {"train='-5'", "[1, 100000000]"}},
      {"synthetic:classes=1", train("synthetic:classes=1"), {"classes='1'", "[2, 65536]"}},
      {"synthetic:noise=nan", train("synthetic:noise=nan"), {"noise='nan'", "finite"}},
      {"synthetic:colour=red", train("synthetic:colour=red"), {"unknown key 'colour'"}},
      {"csv: a FIFO", train("csv:{d}/fifo"), {"fifo", "a pipe (FIFO)", "give the path"}},
      {"csv: UTF-16 text", train("csv:{d}/utf16.csv"), {"utf16.csv", "UTF-16", "UTF-8"}},
      {"csv: a NUL byte", train("csv:{d}/nul.csv"), {"nul.csv", "NUL byte at offset 8"}},
      {"csv: /dev/zero", train("csv:/dev/zero"), {"/dev/zero", "a character device"}},
      {"csv: a 1 TiB sparse file",
       train("csv:{d}/sparse.csv"),
       {"sparse.csv", "1.0 TiB", "4.0 GiB"}},
      {"idx: a FIFO", train("idx:{d}/fifo,{d}/fifo"), {"fifo", "a pipe (FIFO)"}},
      {"fashion-mnist:/nonexistent",
       train("fashion-mnist:/nonexistent"),
       {"/nonexistent", "apt-get install dataset-fashion-mnist"}},
  };
}

std::vector<Row> scenario_rows() {
  const auto train = [](const std::string& file) {
    return "train -q --scenario {d}/" + file + kOut;
  };
  return {
      {"scenario: TOML syntax error", train("syntax.toml"), {"syntax.toml:2:", "fix the TOML"}},
      {"scenario: latency = \"2parsecs\"", train("unit.toml"), {"unit.toml:3:", "not a duration"}},
      {"scenario: unknown key", train("typo.toml"), {"typo.toml:3:", "'latncy'", "valid keys"}},
      {"scenario: nodes = -1", train("nodes.toml"), {"nodes.toml:1:", "1 to 256"}},
      {"scenario: latency = 5 (no unit)", train("type.toml"), {"type.toml:2:", "\"2ms\""}},
      {"scenario: loss = 2", train("loss.toml"), {"loss.toml:2:", "0 to 0.5"}},
      {"scenario: fault kind \"meteor\"", train("kind.toml"), {"kind.toml:2:", "meteor"}},
      {"scenario: fault on rank 7 of 4", train("rank.toml"), {"rank 7", "4 nodes"}},
      {"scenario: nodes = true", train("bool.toml"), {"bool.toml:1:", "an integer from 1 to 256"}},
      {"scenario: until before at", train("until.toml"), {"until.toml:7:", "not after at"}},
      {"scenario: overlapping partition groups",
       train("overlap.toml"),
       {"overlap.toml:4:", "rank 1 is in two groups"}},
      {"scenario: a link to rank 9 of 4", train("link9.toml"), {"rank 9", "4 nodes"}},
      {"scenario: missing file", train("none.toml"), {"--scenario", "none.toml", "check the path"}},
      {"scenario: a directory", "train -q --scenario {d}" + kOut, {"--scenario", "is a directory"}},
      {"scenario: a FIFO", train("fifo"), {"fifo", "a pipe (FIFO)", "scenario"}},
  };
}

std::vector<Row> npz_rows() {
  const auto train = [](const std::string& file) {
    return "train -q --model mlp:4 --init " + file + kOut;
  };
  const std::string fixtures = std::string(DSGD_SOURCE_DIR) + "/tests/data/npz/";
  return {
      {"--init empty file", train("{d}/empty.npz"), {"empty.npz", "empty", "np.savez"}},
      {"--init zip cut in half", train("{d}/cut.npz"), {"cut.npz", "not a .npz archive"}},
      {"--init missing file", train("{d}/none.npz"), {"none.npz", "check the path"}},
      {"--init a directory", train("{d}"), {"--init", "is a directory", ".npz file"}},
      {"--init a FIFO", train("{d}/fifo"), {"fifo", "a pipe (FIFO)", ".npz archive"}},
      {"--init wrong names", train("{d}/names.npz"), {"names.npz", "layers.0.weight", "--model"}},
      {"--init wrong shape", train("{d}/shape.npz"), {"shape.npz", "(32, 4)", "needs (4, 32)"}},
      {"--init missing layer", train("{d}/fewer.npz"), {"fewer.npz", "has no layers.1.weight"}},
      {"--init extra layer", train("{d}/extra.npz"), {"extra.npz", "layers.2.weight"}},
      {"--init int64 dtype",
       train(fixtures + "bad_int64.npz.fixture"),
       {"bad_int64", "'<i8'", "np.float32"}},
      {"--init int32 dtype", train("{d}/int32.npz"), {"int32.npz", "'<i4'", "np.float32"}},
      {"--init Fortran order",
       train(fixtures + "bad_fortran.npz.fixture"),
       {"bad_fortran", "Fortran order"}},
      {"--init big-endian",
       train(fixtures + "bad_bigendian.npz.fixture"),
       {"bad_bigendian", "big-endian"}},
      {"--init entry that is not .npy",
       train("{d}/notes.npz"),
       {"notes.npz", "notes.txt", "not a .npy array"}},
      {"--init entry that claims 3 GiB",
       train("{d}/claims3g.npz"),
       {"claims3g.npz", "'unused'", "declares 3221225472 bytes"}},
      {"--init NaN parameter",
       train("{d}/nan.npz"),
       {"nan.npz", "layers.1.weight", "NaN", "index 3"}},
  };
}

void check_rows(const std::vector<Row>& rows) {
  TempDir dir;
  make_files(dir.path().string());
  std::filesystem::create_directory(dir.path() / "out");
  const std::string before = dir.listing();
  for (const Row& row : rows) {
    const std::string args = replace_all(row.args, "{d}", dir.path().string());
    const auto r = run_dsgd(args);
    INFO(row.input << "\ndsgd " << args << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Catch::StartsWith("dsgd: error: "));
    for (const std::string& word : row.words)
      CHECK_THAT(r.err, Catch::Contains(replace_all(word, "{d}", dir.path().string())));
    // Nothing written, not even a temporary file; no input file touched.
    CHECK(std::filesystem::is_empty(dir.path() / "out"));
    CHECK(dir.listing() == before);
  }
}

}  // namespace

TEST_CASE("bad flag values: exit 2, one line naming the flag, no output file", "[bad_input]") {
  check_rows(flag_rows());
}

TEST_CASE("bad values of bench, lesson and trace: exit 2, one line, no output", "[bad_input]") {
  check_rows(command_rows());
}

TEST_CASE("bad data files: exit 2, one line naming the file and row", "[bad_input]") {
  check_rows(data_rows());
}

TEST_CASE("bad scenario files: exit 2, one line with file:line:col", "[bad_input]") {
  check_rows(scenario_rows());
}

TEST_CASE("bad --init archives: exit 2, one line naming the file and entry", "[bad_input]") {
  check_rows(npz_rows());
}

TEST_CASE("a run that diverges stops at the first non-finite loss, exit 1, saving nothing",
          "[bad_input]") {
  TempDir dir;
  const std::string out = (dir.path() / "p.npz").string();
  const auto r = run_dsgd("train -q --lr 1e38 --save " + out + " --metrics " + out + ".jsonl");
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Catch::Contains("loss is NaN") && Catch::Contains("nothing was saved"));
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("every bad input tested here is a row of docs/errors.md's Bad input table",
          "[bad_input]") {
  const std::string readme = read_text(std::string(DSGD_SOURCE_DIR) + "/docs/errors.md");
  const auto section = readme.find("## Bad input");
  REQUIRE(section != std::string::npos);
  const std::string table = readme.substr(section);
  for (const auto& rows : {flag_rows(), command_rows(), data_rows(), scenario_rows(), npz_rows()})
    for (const Row& row : rows) {
      INFO(row.input);
      CHECK_THAT(table, Catch::Contains("| `" + row.input + "` |"));
    }
}

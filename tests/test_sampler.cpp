// DataParallelSampler: batches walk a per-epoch permutation (or file order), the last batch
// of an epoch may be short, and rank slices tile each batch with sizes differing by <= 1.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/data/sampler.h"
#include "core/errors.h"

using dsgd::DataParallelSampler;

namespace {

std::vector<int64_t> to_vector(std::span<const int64_t> s) {
  return {s.begin(), s.end()};
}

std::vector<int64_t> epoch_order(DataParallelSampler& s, int64_t epoch) {
  std::vector<int64_t> all;
  for (int64_t i = 0; i < s.batches_per_epoch(); ++i) {
    auto b = s.batch(epoch * s.batches_per_epoch() + i);
    CHECK(b.epoch == epoch);
    CHECK(b.index_in_epoch == i);
    all.insert(all.end(), b.indices.begin(), b.indices.end());
  }
  return all;
}

bool is_permutation_of_range(std::vector<int64_t> v, int64_t n) {
  std::sort(v.begin(), v.end());
  std::vector<int64_t> iota(static_cast<size_t>(n));
  std::iota(iota.begin(), iota.end(), int64_t{0});
  return v == iota;
}

}  // namespace

TEST_CASE("rank slices tile a batch, sizes differing by at most 1", "[sampler]") {
  for (int world = 1; world <= 9; ++world) {
    for (int64_t batch : {int64_t{0}, int64_t{1}, int64_t{world - 1}, int64_t{world},
                          int64_t{world + 1}, int64_t{256}}) {
      INFO("world " << world << " batch " << batch);
      int64_t expect_begin = 0, smallest = batch, largest = 0;
      for (int rank = 0; rank < world; ++rank) {
        auto [begin, end] = DataParallelSampler::slice(batch, rank, world);
        CHECK(begin == expect_begin);
        CHECK(end >= begin);
        int64_t size = end - begin;
        smallest = std::min(smallest, size);
        largest = std::max(largest, size);
        // The first batch % world ranks take the extra samples.
        CHECK(size == batch / world + (rank < batch % world ? 1 : 0));
        expect_begin = end;
      }
      CHECK(expect_begin == batch);
      CHECK(largest - smallest <= 1);
    }
  }
  CHECK_THROWS_AS(DataParallelSampler::slice(8, 4, 4), dsgd::UsageError);
  CHECK_THROWS_AS(DataParallelSampler::slice(8, -1, 4), dsgd::UsageError);
  CHECK_THROWS_AS(DataParallelSampler::slice(8, 0, 0), dsgd::UsageError);
}

TEST_CASE("each epoch is a permutation with a short last batch", "[sampler]") {
  DataParallelSampler s(103, 10, true, 7);
  REQUIRE(s.batches_per_epoch() == 11);
  CHECK(s.batch(9).indices.size() == 10);
  CHECK(s.batch(10).indices.size() == 3);  // 103 = 10 * 10 + 3, like drop_last=False
  CHECK(s.batch(11).epoch == 1);
  CHECK(s.batch(11).index_in_epoch == 0);

  std::vector<int64_t> e0 = epoch_order(s, 0), e1 = epoch_order(s, 1), e2 = epoch_order(s, 2);
  CHECK(is_permutation_of_range(e0, 103));
  CHECK(is_permutation_of_range(e1, 103));
  CHECK(is_permutation_of_range(e2, 103));
  CHECK(e0 != e1);
  CHECK(e1 != e2);
  std::vector<int64_t> identity(103);
  std::iota(identity.begin(), identity.end(), int64_t{0});
  CHECK(e0 != identity);
}

TEST_CASE("permutations depend only on seed and epoch", "[sampler]") {
  DataParallelSampler a(50, 8, true, 123), b(50, 8, true, 123), c(50, 8, true, 124);
  std::vector<int64_t> a3 = epoch_order(a, 3);
  // b jumps straight to epoch 3, then back to 0: the cache must not leak between epochs.
  CHECK(epoch_order(b, 3) == a3);
  CHECK(epoch_order(b, 0) == epoch_order(a, 0));
  CHECK(epoch_order(b, 3) == a3);
  CHECK(epoch_order(c, 3) != a3);

  // Golden values: the RNG is self-written, so every rank on every platform agrees.
  DataParallelSampler g(10, 4, true, 42);
  CHECK(to_vector(g.batch(0).indices) == std::vector<int64_t>{3, 5, 1, 0});
  CHECK(to_vector(g.batch(1).indices) == std::vector<int64_t>{2, 6, 4, 7});
  CHECK(to_vector(g.batch(2).indices) == std::vector<int64_t>{9, 8});
  CHECK(to_vector(g.batch(3).indices) == std::vector<int64_t>{4, 9, 6, 1});
}

TEST_CASE("without shuffling batches follow file order", "[sampler]") {
  DataParallelSampler s(25, 10, false, 99);
  CHECK(to_vector(s.batch(0).indices) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(to_vector(s.batch(2).indices) == std::vector<int64_t>{20, 21, 22, 23, 24});
  auto b = s.batch(4);  // epoch 1, batch 1
  CHECK(b.epoch == 1);
  CHECK(b.index_in_epoch == 1);
  CHECK(to_vector(b.indices) == std::vector<int64_t>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19});
}

TEST_CASE("a global batch larger than the data takes all samples", "[sampler]") {
  DataParallelSampler s(5, 64, true, 1);
  CHECK(s.batches_per_epoch() == 1);
  CHECK(s.global_batch() == 5);
  CHECK(is_permutation_of_range(to_vector(s.batch(0).indices), 5));
  CHECK(s.batch(1).epoch == 1);

  DataParallelSampler one(1, 1, true, 1);
  CHECK(to_vector(one.batch(5).indices) == std::vector<int64_t>{0});

  CHECK_THROWS_AS(DataParallelSampler(0, 4, true, 1), dsgd::UsageError);
  CHECK_THROWS_AS(DataParallelSampler(10, 0, true, 1), dsgd::UsageError);
  CHECK_THROWS_AS(s.batch(-1), std::invalid_argument);
}

TEST_CASE("rank slices of every batch cover the epoch once", "[sampler]") {
  const int world = 3;
  DataParallelSampler s(20, 7, true, 5);  // batches of 7, 7, 6
  std::vector<int64_t> seen;
  for (int64_t step = 0; step < s.batches_per_epoch(); ++step) {
    auto b = s.batch(step);
    for (int rank = 0; rank < world; ++rank) {
      auto [begin, end] =
          DataParallelSampler::slice(static_cast<int64_t>(b.indices.size()), rank, world);
      auto mine = b.indices.subspan(begin, end - begin);
      seen.insert(seen.end(), mine.begin(), mine.end());
    }
  }
  CHECK(is_permutation_of_range(seen, 20));
}

TEST_CASE("gather_rows copies the selected rows", "[sampler]") {
  dsgd::Split split;
  split.x = dsgd::Tensor({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31});
  split.labels = {5, 6, 7, 8};
  std::vector<int64_t> idx = {3, 0, 3};
  std::vector<float> x(6);
  std::vector<int32_t> labels(3);
  dsgd::gather_rows(split, idx, x, labels);
  CHECK(x == std::vector<float>{30, 31, 0, 1, 30, 31});
  CHECK(labels == std::vector<int32_t>{8, 5, 8});
  std::vector<float> wrong(5);
  CHECK_THROWS_AS(dsgd::gather_rows(split, idx, wrong), std::invalid_argument);
  std::vector<int64_t> bad = {4};
  std::vector<float> x2(2);
  CHECK_THROWS_AS(dsgd::gather_rows(split, bad, x2), std::out_of_range);
}
